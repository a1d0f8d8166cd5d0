"""Issue 33: ``/readyz`` lists each model config's circuit breaker, and an open one does not make
the process unready (the database decides); ``/metrics`` shows it as a gauge."""

from __future__ import annotations

from pathlib import Path

import pytest
from litestar.testing import AsyncTestClient
from prometheus_client.parser import text_string_to_metric_families

from app.errors import ModelUnavailable
from app.main import create_app
from tests.integration.conftest import ADMIN, make_settings
from tests.unit.llm.test_llm_gateway import request
from tests.unit.llm.test_model_retry import error, timed_gateway

TOML = {"llm": {"models": {"default": {"model": "m0", "retry": {"maxAttempts": 1}, "circuit": {"failures": 2}},
                           "judge": {"model": "m1"}}}}


def circuit_gauges(text: str) -> dict[str, float]:
    return {s.labels["model_config"]: s.value for family in text_string_to_metric_families(text)
            for s in family.samples if s.name == "companion_model_circuit_open"}  # fmt: skip


async def test_readyz_lists_each_breaker_and_stays_ready_while_one_is_open(db_url: str, tmp_path: Path) -> None:
    gw, _, time = timed_gateway(error(500), toml=TOML)
    async with AsyncTestClient(create_app(make_settings(db_url, tmp_path), model=gw)) as client:
        ready = await client.get("/readyz")
        assert ready.status_code == 200
        assert ready.json()["models"] == [{"id": "default", "circuit": "closed"}, {"id": "judge", "circuit": "closed"}]
        for _ in range(2):
            with pytest.raises(ModelUnavailable):
                await gw.complete(request())
        ready = await client.get("/readyz")
        assert ready.status_code == 200 and ready.json()["status"] == "ok" and ready.json()["database"] == "ok"
        assert ready.json()["models"] == [{"id": "default", "circuit": "open"}, {"id": "judge", "circuit": "closed"}]
        gauges = circuit_gauges((await client.get("/metrics", headers=ADMIN)).text)
        assert gauges["default"] == 1 and gauges["judge"] == 0
        time.now += 10
        assert (await client.get("/readyz")).json()["models"][0] == {"id": "default", "circuit": "half_open"}


async def test_readyz_with_a_fake_model_lists_no_breakers(api) -> None:
    ready = await api.client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["models"] == []
