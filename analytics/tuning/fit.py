"""``companion tune fit``: cross-validated fit, comparison with the current weights, JSON out.

Cross-validation is grouped by conversation (``GroupKFold``, shuffled by ``seed``), so one
chatty conversation cannot be on both sides of a split. The final weights are fitted on every
usable turn. Deterministic: same file, label, folds and seed → same weights.

Scaling: the scorer only ranks candidates, so any positive multiple of the fitted vector ranks
the same. The file holds the fitted vector rescaled so its L1 norm over the fitted features
equals the current weights' (keeping scores on the familiar scale of ``seed-v0``); the factor is
``training.scale`` (raw = file ÷ scale), which ``evaluate`` uses for calibrated log-loss.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import numpy as np
from sklearn.model_selection import GroupKFold

from analytics.tuning.choice_model import FITTED, TurnMetrics, fit_weights, score_turns
from analytics.tuning.dataset import ChoiceData, load_decisions
from scheduling.selection.weights import ScoringWeights


class FitResult(msgspec.Struct):
    weights: ScoringWeights
    raw: dict[str, float]
    fitted_cv: TurnMetrics
    current_cv: TurnMetrics


def _mean(metrics: list[TurnMetrics]) -> TurnMetrics:
    total = sum(m.turns for m in metrics)
    avg = {k: round(sum(getattr(m, k) * m.turns for m in metrics) / total, 6)
           for k in ("top1_accuracy", "mean_reciprocal_rank", "log_loss")}
    return TurnMetrics(turns=total, **avg)


def cross_validate(data: ChoiceData, current: ScoringWeights, folds: int, seed: int,
                   progress: Callable[[str], None]) -> tuple[TurnMetrics, TurnMetrics]:
    conversations = len(set(data.groups.tolist()))
    if conversations < folds:
        raise ValueError(f"{folds} folds need at least {folds} conversations; the input has {conversations}")
    splitter = GroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    fitted, base = [], []
    for i, (train, test) in enumerate(splitter.split(np.zeros(data.turns), groups=data.groups), start=1):
        mask = np.zeros(data.turns, dtype=bool)
        mask[train] = True
        held_out = data.subset(~mask)
        fitted.append(score_turns(held_out, fit_weights(data.subset(mask))))
        base.append(score_turns(held_out, current.weights))
        progress(f"fold {i}/{folds}: top-1 {fitted[-1].top1_accuracy:.3f} (current {base[-1].top1_accuracy:.3f}) "
                 f"on {held_out.turns} held-out turns")
    return _mean(fitted), _mean(base)


def fit(path: str | Path, *, label: str, current: ScoringWeights, folds: int = 5, seed: int = 0,
        progress: Callable[[str], None] = lambda _: None, now: datetime | None = None) -> FitResult:
    progress(f"reading {path}")
    data = load_decisions(path, label)
    progress(f"{data.rows_read} rows, {data.turns} usable turns (excluded: {data.excluded})")
    fitted_cv, current_cv = cross_validate(data, current, folds, seed, progress) if folds > 1 else (None, None)
    progress("fitting on all turns")
    raw = fit_weights(data)
    norm_raw = sum(abs(raw[f]) for f in FITTED)
    scale = sum(abs(current.weights[f]) for f in FITTED) / norm_raw if norm_raw else 1.0
    weights = {f: round(raw[f] * scale, 6) for f in FITTED}
    weights["mentioned"] = current.weights["mentioned"]
    digest = hashlib.sha1(msgspec.json.encode(dict(sorted(weights.items())))).hexdigest()[:8]
    all_turns = score_turns(data, {f: raw[f] for f in FITTED})
    metrics: dict = {"inSample": msgspec.to_builtins(all_turns), "currentInSample": msgspec.to_builtins(
        score_turns(data, current.weights))}
    if fitted_cv is not None:
        metrics |= {"crossValidated": msgspec.to_builtins(fitted_cv), "currentCrossValidated": msgspec.to_builtins(current_cv)}
    result = ScoringWeights(
        version=f"tuned-{label}-{digest}",
        created_at=(now or datetime.now(UTC)).isoformat().replace("+00:00", "Z"),
        weights=weights,
        metrics=metrics | {"comparedWith": current.version},
        training={"rows": data.rows_read, "turns": data.turns, "label": label, "folds": folds,
                  "source": str(path), "seed": seed, "scale": round(scale, 9), "excludedTurns": data.excluded},
    )
    return FitResult(result, raw, fitted_cv or all_turns, current_cv or score_turns(data, current.weights))


def write_weights(weights: ScoringWeights, out: str | Path) -> None:
    Path(out).write_bytes(msgspec.json.format(msgspec.json.encode(weights), indent=2) + b"\n")
