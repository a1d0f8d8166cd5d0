"""Tuning on decisions sampled from a known weight vector, determinism, and bad input files."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from decision_samples import TRUE_WEIGHTS, write_sampled_decisions

from analytics.export import DECISION_COLUMNS
from analytics.tuning.choice_model import FITTED, score_turns
from analytics.tuning.dataset import DecisionsFileError, load_decisions
from analytics.tuning.evaluate import evaluate
from analytics.tuning.fit import fit, write_weights
from scheduling.selection.weights import DEFAULT_WEIGHTS, load_weights


@pytest.fixture(scope="module")
def sampled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sampled_decisions(tmp_path_factory.mktemp("tune") / "decisions.csv", turns=6000, seed=7)


def test_fitted_weights_point_the_same_way_as_the_true_ones(sampled: Path) -> None:
    result = fit(sampled, label="selected", current=DEFAULT_WEIGHTS, folds=3, seed=0)
    fitted = np.array([result.weights.weights[f] for f in FITTED])
    true = np.array([TRUE_WEIGHTS[f] for f in FITTED])
    assert fitted @ true / (np.linalg.norm(fitted) * np.linalg.norm(true)) >= 0.95
    data = load_decisions(sampled)
    truth = score_turns(data, TRUE_WEIGHTS).top1_accuracy
    assert abs(score_turns(data, result.weights.weights).top1_accuracy - truth) <= 0.02


def test_output_is_a_loadable_scoring_weights_file_scaled_like_the_current_one(sampled: Path, tmp_path: Path) -> None:
    result = fit(sampled, label="selected", current=DEFAULT_WEIGHTS, folds=2, seed=0)
    write_weights(result.weights, tmp_path / "w.json")
    loaded = load_weights(tmp_path / "w.json")
    assert loaded.version.startswith("tuned-selected-")
    assert loaded.training["rows"] == 24000 and loaded.training["label"] == "selected"
    assert sum(abs(loaded.weights[f]) for f in FITTED) == pytest.approx(sum(abs(DEFAULT_WEIGHTS.weights[f]) for f in FITTED), rel=1e-4)
    assert loaded.weights["mentioned"] == DEFAULT_WEIGHTS.weights["mentioned"]
    assert "crossValidated" in loaded.metrics
    [(_, version, metrics)] = evaluate(sampled, [tmp_path / "w.json"])
    assert version == loaded.version and metrics.turns == 6000


def test_fit_is_deterministic_for_a_seed(sampled: Path) -> None:
    a = fit(sampled, label="selected", current=DEFAULT_WEIGHTS, folds=3, seed=5)
    b = fit(sampled, label="selected", current=DEFAULT_WEIGHTS, folds=3, seed=5)
    assert a.weights.weights == b.weights.weights and a.fitted_cv == b.fitted_cv


def _write(path: Path, rows: list[dict], columns=DECISION_COLUMNS) -> Path:
    with path.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(columns)
        out.writerows([[r.get(c, "0") for c in columns] for r in rows])
    return path


def _row(turn: str, agent: str, selected: int, **over: str) -> dict:
    return {"turn_id": turn, "conversation_id": "c", "agent_id": agent, "selected": str(selected),
            "llm_selected": "", "weights_version": "w", **over}


def test_missing_columns_are_named_on_line_1(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.csv", [], columns=[c for c in DECISION_COLUMNS if c != "freshness_score"])
    with pytest.raises(DecisionsFileError, match="line 1: missing column.*freshness_score"):
        load_decisions(path)


def test_non_numeric_value_names_line_and_column(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.csv", [_row("t1", "a", 1), _row("t1", "b", 0, comfort_match="high")])
    with pytest.raises(DecisionsFileError, match="line 3: column comfort_match is not a number: 'high'"):
        load_decisions(path)


def test_turn_without_a_selected_candidate_names_its_first_line(tmp_path: Path) -> None:
    rows = [_row("t1", "a", 1), _row("t1", "b", 0), _row("t2", "a", 0), _row("t2", "b", 0)]
    with pytest.raises(DecisionsFileError, match="line 4: turn t2 has no selected candidate"):
        load_decisions(_write(tmp_path / "d.csv", rows))


def test_mentions_and_single_candidate_turns_are_excluded(tmp_path: Path) -> None:
    rows = [_row("t1", "a", 1), _row("t1", "b", 0), _row("t2", "a", 1, mentioned="1"), _row("t2", "b", 0),
            _row("t3", "a", 1)]
    data = load_decisions(_write(tmp_path / "d.csv", rows))
    assert data.turns == 1 and data.excluded["mentioned"] == 1 and data.excluded["single_candidate"] == 1
