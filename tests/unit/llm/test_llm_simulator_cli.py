from click.testing import CliRunner

from app.llm.simulator.cli import simulate_llm


def test_help_says_it_is_a_simulator():
    result = CliRunner().invoke(simulate_llm, ["--help"])
    assert result.exit_code == 0
    assert "SIMULATOR" in result.output and "--fault-rate" in result.output and "--faults" in result.output


def test_unknown_fault_kind_is_rejected():
    result = CliRunner().invoke(simulate_llm, ["--faults", "500,meteor"])
    assert result.exit_code == 2 and "meteor" in result.output
