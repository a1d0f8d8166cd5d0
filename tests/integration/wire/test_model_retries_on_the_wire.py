"""Issue 33 on the wire: the real ``openai`` client against the simulator over loopback. Transient
faults are retried (honouring the simulator's ``retry-after: 1``), and a group turn whose first
model requests all fail completes where, with retries off, it fails ``all_replies_dropped``."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from litestar.testing import AsyncTestClient

from app.errors import ModelUnavailable
from app.llm.config import load_llm_settings
from app.llm.gateway import ModelGateway
from app.llm.port import ChatMessage, ModelRequest
from app.main import create_app
from tests.integration.conftest import Api, make_settings
from tests.integration.turns.conftest import make_group, post_turn

SIMULATOR_SEED = 33
RETRIES_OFF = {"maxAttempts": 1}


@pytest.fixture
def faulty_sim(sim):
    """``sim`` whose queued faults are cleared afterwards (the shared fixture does not know them)."""
    yield sim
    sim.queue_faults()


def gateway(sim, retry: dict | None = None, timeout_ms: int = 10_000) -> ModelGateway:
    model = {"baseUrl": sim.base_url, "model": "sim", "timeoutMs": timeout_ms, **({"retry": retry} if retry else {})}
    return ModelGateway(load_llm_settings({}, {"llm": {"models": {"default": model}}}), env={})


def ask(text: str = "hello there") -> ModelRequest:
    return ModelRequest(messages=[ChatMessage("system", "You are Lia."), ChatMessage("user", text)], purpose="actor")


async def test_a_500_then_an_answer_is_one_successful_call(faulty_sim):
    faulty_sim.queue_faults("500")
    before = faulty_sim.stats()["requests"]
    result = await gateway(faulty_sim).complete(ask())
    assert "simulated" in result.text and result.retries == 1
    assert faulty_sim.stats()["requests"] == before + 2


async def test_a_429_waits_for_the_simulators_retry_after(faulty_sim):
    faulty_sim.queue_faults("429")
    started = time.perf_counter()
    result = await gateway(faulty_sim).complete(ask())
    assert result.retries == 1 and time.perf_counter() - started >= 1.0  # it sends retry-after: 1


async def test_a_stream_cut_half_way_is_not_retried_but_an_empty_one_is(faulty_sim):
    gw = gateway(faulty_sim)
    faulty_sim.queue_faults("cut")
    deltas: list[str] = []

    async def on_delta(piece: str) -> None:
        deltas.append(piece)

    with pytest.raises(ModelUnavailable, match="stream ended"):
        await gw.stream(ask(), on_delta)
    assert deltas  # the user saw half a draft: it is discarded by the caller, not silently replaced
    faulty_sim.queue_faults("empty", "500")
    deltas.clear()
    result = await gw.stream(ask(), on_delta)
    assert result.retries == 2 and "".join(deltas) == result.text and result.text


async def test_retries_give_up_at_the_deadline_on_a_server_that_keeps_failing(faulty_sim):
    faulty_sim.configure(fault_rate=1.0, faults=["429"])
    started = time.perf_counter()
    with pytest.raises(ModelUnavailable) as info:
        await gateway(faulty_sim, timeout_ms=1500).complete(ask())
    assert time.perf_counter() - started < 1.5
    assert info.value.details["retryStopped"] == "deadline" and info.value.details["attempts"] == 2


@asynccontextmanager
async def app_on(sim, db_url: str, tmp_path: Path, retry: dict | None) -> AsyncIterator[Api]:
    table = "".join(f"{k} = {v}\n" for k, v in (retry or {}).items())
    config = tmp_path / "companion.toml"
    config.write_text(f'[llm.models.default]\nbaseUrl = "{sim.base_url}"\nmodel = "sim"\ntimeoutMs = 15000\n'
                      + (f"[llm.models.default.retry]\n{table}" if table else ""))  # fmt: skip
    settings = make_settings(db_url, tmp_path, COMPANION_CONFIG=str(config), COMPANION_TURN_SPECULATION="off")
    async with AsyncTestClient(create_app(settings), timeout=60) as client:
        yield Api(client, settings)


@pytest.mark.parametrize(("retry", "faults", "status"), [(RETRIES_OFF, 10, "failed"), (None, 6, "completed")])
async def test_a_turn_whose_first_model_requests_fail_completes_with_retries(faulty_sim, db_url, tmp_path, retry, faults,
                                                                             status):  # fmt: skip
    async with app_on(faulty_sim, db_url, tmp_path, retry) as api:
        conv, _ = await make_group(api, autoReply={"enabled": False})
        before = faulty_sim.stats()["requests"]
        # Retries off: the turn's five requests (intent, emotion, two actors and what the scorer
        # asks) fail, and so does each actor's one more try of the turn itself (ten faults cover
        # them all). Retries on: intent and emotion run first and use up six faults between them
        # (at most four each), so the actors' calls, which start after them, answer.
        faulty_sim.queue_faults(*["500"] * faults)
        resp = await post_turn(api, conv["id"], "我今天好难过，你们在吗？")
        turn = resp.json()
        assert resp.status_code == 201 and turn["status"] == status, turn.get("error")
        if status == "failed":
            assert turn["error"]["code"] == "all_replies_dropped"
            assert faulty_sim.stats()["requests"] - before <= faults, "a request past the faults answered"
        else:
            assert turn["agentMessages"] and all(m["content"] for m in turn["agentMessages"])
