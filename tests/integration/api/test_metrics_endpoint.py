"""Issue 11: ``GET /metrics`` (Prometheus text format), admin-protected or off by a setting."""

from __future__ import annotations

from pathlib import Path

from litestar.testing import AsyncTestClient
from prometheus_client.parser import text_string_to_metric_families

from app.main import create_app
from tests.integration.conftest import ADMIN, ALICE, Api, make_settings
from tests.integration.turns.conftest import make_group, post_turn


def _samples(text: str) -> dict[str, list]:
    out: dict[str, list] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, []).append(sample)
    return out


async def test_metrics_need_an_admin_token_by_default(api: Api) -> None:
    assert (await api.client.get("/metrics")).status_code == 401
    assert (await api.client.get("/metrics", headers=ALICE)).json()["code"] == "admin_required"
    await api.client.get("/v1/agents", headers=ALICE)
    resp = await api.client.get("/metrics", headers=ADMIN)
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/plain")
    requests = _samples(resp.text)["companion_http_requests_total"]
    assert any(s.labels == {"method": "GET", "route": "/v1/agents", "status": "200"} and s.value >= 1 for s in requests)


async def test_metrics_can_be_switched_off(db_url: str, tmp_path: Path) -> None:
    settings = make_settings(db_url, tmp_path, COMPANION_METRICS="off")
    async with AsyncTestClient(create_app(settings)) as client:
        resp = await client.get("/metrics", headers=ADMIN)
        assert resp.status_code == 404 and resp.json()["code"] == "metrics_disabled"


async def test_a_turn_shows_up_in_stage_latencies_turn_outcomes_and_model_calls(sim_api: Api) -> None:
    conv, _ = await make_group(sim_api)
    assert (await post_turn(sim_api, conv["id"], "我今天好难过")).status_code == 201
    text = (await sim_api.client.get("/metrics", headers=ADMIN)).text
    samples = _samples(text)
    stages = {s.labels["stage"] for s in samples["companion_turn_stage_seconds_count"]}
    assert {"actor", "select"} <= stages
    assert any(s.labels["status"] == "completed" for s in samples["companion_turns_total"])
    calls = samples["companion_model_calls_total"]
    assert any(s.labels["stage"] == "actor" and s.labels["model_config"] == "default" and s.labels["outcome"] == "ok"
               for s in calls)  # fmt: skip
    assert samples["companion_turns_running"][0].value == 0
