"""CLI smoke tests on a temporary embedded SQLite database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from analytics.cli import analytics, tune


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"COMPANION_DATA_DIR": str(tmp_path / "data"), "COMPANION_JWT_SECRET": "s" * 32,
            "COMPANION_DATABASE_URL": "", "COMPANION_SCORING_WEIGHTS": ""}


def invoke(group, args: list[str], env: dict[str, str]):  # noqa: ANN001, ANN201
    clean = {k: v for k, v in env.items() if v} | {k: None for k, v in env.items() if not v}
    result = CliRunner().invoke(group, args, env=clean, catch_exceptions=False)
    return result


def test_synth_query_report_export_and_tune_end_to_end(env: dict[str, str], tmp_path: Path) -> None:
    result = invoke(analytics, ["synth", "--turns", "600", "--seed", "3"], env)
    assert result.exit_code == 0, result.output
    assert "600 turns" in result.output

    result = invoke(analytics, ["speaking-share", "--format", "json", "--since", "400d"], env)
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert len(rows) == 4 and {"agentId", "candidateTurns", "share"} <= set(rows[0])

    table = invoke(analytics, ["latency"], env)
    assert table.exit_code == 0 and table.output.splitlines()[0].startswith("stage")
    csv_out = invoke(analytics, ["selected-by", "--format", "csv", "--kind", "group"], env)
    assert csv_out.output.splitlines()[0] == "day,selected_by,count,share"

    report = tmp_path / "report.html"
    result = invoke(analytics, ["report", "--since", "30d", "--out", str(report)], env)
    assert result.exit_code == 0, result.output
    page = report.read_text()
    assert page.count("data:image/png;base64,") >= 4 and "<h2 id='speaking-share'>" in page

    decisions = tmp_path / "decisions.csv"
    result = invoke(analytics, ["export", "decisions", "--out", str(decisions)], env)
    assert result.exit_code == 0, result.output
    assert decisions.read_text().splitlines()[0].startswith("turn_id,conversation_id,agent_id,created_at,selected")

    weights = tmp_path / "w.json"
    result = invoke(tune, ["fit", "--input", str(decisions), "--label", "llm", "--out", str(weights), "--folds", "3"], env)
    assert result.exit_code == 0, result.output
    assert "cross-validated" in result.output and json.loads(weights.read_text())["training"]["label"] == "llm"
    result = invoke(tune, ["evaluate", "--input", str(decisions), "--weights", str(weights)], env)
    assert result.exit_code == 0 and "tuned-llm-" in result.output


def test_bad_filter_is_a_usage_error_naming_the_option(env: dict[str, str]) -> None:
    result = CliRunner().invoke(analytics, ["emotions", "--since", "lastweek"], env=env)
    assert result.exit_code == 2 and "--since" in result.output


def test_tune_fit_reports_a_bad_file_with_its_line(env: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("turn_id,agent_id\nt1,a\n")
    result = CliRunner().invoke(tune, ["fit", "--input", str(bad), "--out", str(tmp_path / "w.json")], env=env)
    assert result.exit_code == 1 and "line 1: missing column(s)" in result.output
