"""The app on real HTTP to the schema-following simulator: every model stage over the wire.

The simulator answers each request from the JSON schema it receives (the way OpenAI strict mode
or a llama.cpp grammar constrain a model), so a schema that lets a field vanish or an id be any
string fails here exactly as it fails with a real model.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from litestar.testing import AsyncTestClient

from app.llm.fakes import conftest_llm_guard
from app.llm.simulator import FAULT_KINDS, start_simulator_in_thread
from app.main import create_app
from tests.integration.conftest import Api, make_settings


@pytest.fixture(autouse=True)
def _no_real_models():
    yield from conftest_llm_guard()


@pytest.fixture(scope="module")
def simulator():
    handle = start_simulator_in_thread(latency_ms=0, seed=11, hang_s=5)
    yield handle
    handle.stop()


@pytest.fixture
def sim(simulator):
    simulator.configure(latency_ms=0, jitter_ms=0, fault_rate=0.0, faults=FAULT_KINDS)
    return simulator


@pytest.fixture
async def wire_api(db_url: str, tmp_path: Path, sim) -> AsyncIterator[Api]:
    settings = make_settings(db_url, tmp_path, COMPANION_LLM_BASE_URL=sim.base_url, COMPANION_LLM_MODEL="sim",
                             COMPANION_LLM_TIMEOUT_MS="10000")
    app = create_app(settings)
    async with AsyncTestClient(app, timeout=60) as client:
        yield Api(client, settings)
