"""``ModelGateway.stream`` against the simulator over loopback with the real ``openai`` client: SSE
chunks become deltas, the pace is the simulator's, structured answers stay schema-valid once
assembled, and every failure (before or during the stream) is one of the named model errors."""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Literal

import msgspec
import pytest

from app.errors import ModelTimeout, ModelUnavailable
from app.llm.config import load_llm_settings
from app.llm.gateway import ModelGateway
from app.llm.port import ChatMessage, ModelRequest, stream_or_complete
from app.llm.simulator.language import detect_language
from app.llm.simulator.server import stream_tokens
from app.llm.structured import build_request, decode_text

SIMULATOR_SEED = 5


class Pick(msgspec.Struct, forbid_unknown_fields=True):
    agent_ids: Annotated[list[Literal["a1", "a2", "a3"]], msgspec.Meta(min_length=1, max_length=2)]
    reason: Annotated[str, msgspec.Meta(max_length=60)]
    confidence: Annotated[float, msgspec.Meta(ge=0, le=1)]


class Deltas(list):
    def __init__(self) -> None:
        super().__init__()
        self.at: list[float] = []

    async def __call__(self, piece: str) -> None:
        self.at.append(time.perf_counter())
        self.append(piece)


@pytest.fixture
def streaming_sim(sim):
    """``sim`` with the streaming pace reset too (the shared fixture only resets latency and faults)."""
    sim.configure(ttft_ms=None, tokens_per_s=0.0)
    yield sim
    sim.configure(ttft_ms=None, tokens_per_s=0.0)


def gateway(sim, *, stream: bool = True, mode: str = "json_schema", timeout_ms: int = 5000) -> ModelGateway:
    toml = {"llm": {"models": {"default": {"baseUrl": sim.base_url, "model": "sim", "stream": stream,
                                           "structuredOutput": mode, "timeoutMs": timeout_ms}}}}
    return ModelGateway(load_llm_settings({}, toml), env={})


def ask(text: str, purpose: str = "actor", **kw) -> ModelRequest:
    return ModelRequest(messages=[ChatMessage("system", "You are Lia."), ChatMessage("user", text)], purpose=purpose, **kw)


async def test_a_reply_arrives_as_many_deltas_that_join_into_the_result(streaming_sim):
    gw = gateway(streaming_sim)
    before = streaming_sim.stats()["streamed"]
    deltas = Deltas()
    result = await gw.stream(ask("今天有点累"), deltas)
    assert len(deltas) > 5 and "".join(deltas) == result.text
    assert detect_language(result.text) == "zh" and "模拟" in result.text
    assert result.finish_reason == "stop" and result.model == "sim"
    assert not result.usage.estimated and result.usage.output_tokens > 0
    assert result.first_token_ms is not None
    assert streaming_sim.stats()["streamed"] == before + 1
    await gw.aclose()


async def test_the_first_token_comes_after_ttft_and_the_rest_at_the_given_pace(streaming_sim):
    streaming_sim.configure(latency_ms=1000, ttft_ms=150, tokens_per_s=100)
    gw = gateway(streaming_sim)
    deltas = Deltas()
    started = time.perf_counter()
    result = await gw.stream(ask("hello there"), deltas)
    first, last = deltas.at[0] - started, deltas.at[-1] - started
    assert 0.14 <= first < 0.9, first  # the ttft, not the 1 s latency of a plain call
    assert result.first_token_ms >= 140
    expected_rest = (len(deltas) - 1) / 100
    assert last - first >= expected_rest * 0.9, (last - first, expected_rest)
    await gw.aclose()


async def test_latency_ms_stays_the_whole_latency_of_a_plain_call(streaming_sim):
    streaming_sim.configure(latency_ms=200, ttft_ms=0, tokens_per_s=0)
    gw = gateway(streaming_sim)
    started = time.perf_counter()
    await gw.complete(ask("hello"))
    assert time.perf_counter() - started >= 0.19
    await gw.aclose()


@pytest.mark.parametrize("mode", ["json_schema", "json_object", "prompt"])
async def test_a_streamed_structured_answer_is_schema_valid_once_assembled(streaming_sim, mode):
    gw = gateway(streaming_sim, mode=mode)
    for _ in range(3):
        deltas = Deltas()
        result = await gw.stream(build_request(ask("who should answer?", "select"), Pick), deltas)
        assert len(deltas) > 3
        assert isinstance(decode_text("".join(deltas), Pick), Pick)
    await gw.aclose()


async def test_stream_false_makes_one_plain_call_and_sends_one_delta(streaming_sim):
    gw = gateway(streaming_sim, stream=False)
    before = streaming_sim.stats()["streamed"]
    deltas = Deltas()
    result = await gw.stream(ask("hello"), deltas)
    assert deltas == [result.text] and result.first_token_ms is None
    assert streaming_sim.stats()["streamed"] == before
    await gw.aclose()


@pytest.mark.parametrize(("fault", "error"), [("500", ModelUnavailable), ("429", ModelUnavailable)])
async def test_a_status_fault_before_the_stream_is_the_same_error_as_for_complete(streaming_sim, fault, error):
    streaming_sim.configure(fault_rate=1.0, faults=[fault])
    gw = gateway(streaming_sim)
    deltas = Deltas()
    with pytest.raises(error) as streamed:
        await gw.stream(ask("hello"), deltas)
    with pytest.raises(error) as plain:
        await gw.complete(ask("hello"))
    assert deltas == [] and type(streamed.value) is type(plain.value)
    assert streamed.value.details["status"] == plain.value.details["status"] == int(fault)
    await gw.aclose()


async def test_a_hanging_server_is_a_model_timeout(streaming_sim):
    streaming_sim.configure(fault_rate=1.0, faults=["timeout"])
    gw = gateway(streaming_sim, timeout_ms=300)
    with pytest.raises(ModelTimeout):
        await gw.stream(ask("hello"), Deltas())
    await gw.aclose()


async def test_a_stream_cut_off_half_way_is_unavailable_after_its_deltas(streaming_sim):
    streaming_sim.configure(fault_rate=1.0, faults=["cut"])
    gw = gateway(streaming_sim)
    deltas = Deltas()
    with pytest.raises(ModelUnavailable, match="stream ended"):
        await gw.stream(ask("hello there"), deltas)
    assert deltas, "the first half arrived before the cut"
    assert streaming_sim.stats()["faults"]["cut"] >= 1
    await gw.aclose()


async def test_the_cut_fault_is_never_drawn_for_a_plain_call(streaming_sim):
    streaming_sim.configure(fault_rate=1.0, faults=["cut"])
    gw = gateway(streaming_sim)
    assert "simulated" in (await gw.complete(ask("hello"))).text
    await gw.aclose()


async def test_a_slow_stream_past_the_deadline_is_a_model_timeout(streaming_sim):
    streaming_sim.configure(ttft_ms=0, tokens_per_s=20)
    gw = gateway(streaming_sim, timeout_ms=400)
    deltas = Deltas()
    with pytest.raises(ModelTimeout):
        await gw.stream(ask("hello"), deltas)
    assert deltas
    await gw.aclose()


async def test_cancelling_a_stream_stops_the_deltas(streaming_sim):
    streaming_sim.configure(ttft_ms=0, tokens_per_s=50)
    gw = gateway(streaming_sim)
    deltas = Deltas()
    task = asyncio.create_task(gw.stream(ask("hello"), deltas))
    while not deltas:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    seen = len(deltas)
    await asyncio.sleep(0.1)
    assert seen == len(deltas)
    # the connection pool is still usable afterwards
    assert (await gw.stream(ask("again"), Deltas())).finish_reason == "stop"
    await gw.aclose()


async def test_stream_or_complete_streams_through_the_gateway(streaming_sim):
    gw = gateway(streaming_sim)
    deltas = Deltas()
    result = await stream_or_complete(gw, ask("hello"), deltas)
    assert len(deltas) > 1 and "".join(deltas) == result.text
    await gw.aclose()


@pytest.mark.parametrize("text", ["hello there, friend", "今天有点累，你们在吗？", "", "  two  spaces  ", '{"a": [1, 2]}'])
def test_simulator_tokens_join_back_into_the_text(text):
    tokens = stream_tokens(text)
    assert "".join(tokens) == text and all(tokens) and all(len(t) <= 4 for t in tokens)
