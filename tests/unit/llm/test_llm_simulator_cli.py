from click.testing import CliRunner

from app.llm.simulator.cli import simulate_llm


def test_help_says_it_is_a_simulator():
    result = CliRunner().invoke(simulate_llm, ["--help"])
    assert result.exit_code == 0
    assert "SIMULATOR" in result.output and "--fault-rate" in result.output and "--faults" in result.output


def test_unknown_fault_kind_is_rejected():
    result = CliRunner().invoke(simulate_llm, ["--faults", "500,meteor"])
    assert result.exit_code == 2 and "meteor" in result.output


def test_help_names_the_streaming_options():
    result = CliRunner().invoke(simulate_llm, ["--help"])
    assert "--ttft-ms" in result.output and "--tokens-per-s" in result.output and "cut" in result.output


def test_a_negative_pace_is_rejected():
    result = CliRunner().invoke(simulate_llm, ["--tokens-per-s", "-1"])
    assert result.exit_code == 2 and "--tokens-per-s" in result.output
