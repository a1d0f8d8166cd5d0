"""One loopback simulator per module; tests reconfigure it (latency 0 unless timing matters)."""

import pytest

from app.llm.fakes import conftest_llm_guard
from app.llm.simulator import FAULT_KINDS, start_simulator_in_thread


@pytest.fixture(autouse=True)
def _no_real_models():
    yield from conftest_llm_guard()


@pytest.fixture(scope="module")
def simulator():
    handle = start_simulator_in_thread(latency_ms=0, seed=7, hang_s=5)
    yield handle
    handle.stop()


@pytest.fixture
def sim(simulator):
    """The shared simulator, reset to no faults and no latency for each test."""
    simulator.configure(latency_ms=0, jitter_ms=0, fault_rate=0.0, faults=FAULT_KINDS)
    return simulator
