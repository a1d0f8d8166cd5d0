"""The simulator driven by the real ``openai.AsyncOpenAI`` client over loopback."""

import time
from typing import Annotated, Literal

import httpx2
import msgspec
import openai
import pytest

from app.errors import InvalidModelOutput, ModelTimeout, ModelUnavailable
from app.llm.config import load_llm_settings
from app.llm.gateway import ModelGateway
from app.llm.port import ChatMessage, ModelRequest
from app.llm.simulator.language import detect_language
from app.llm.schema import wire_schema as strict_schema
from app.llm.structured import complete_struct


class Suggestion(msgspec.Struct, forbid_unknown_fields=True):
    text: Annotated[str, msgspec.Meta(min_length=4, max_length=40)]
    intent: Literal["agree", "ask", "change_topic"]


class Suggestions(msgspec.Struct, forbid_unknown_fields=True):
    suggestions: Annotated[list[Suggestion], msgspec.Meta(min_length=2, max_length=3)]
    confidence: Annotated[float, msgspec.Meta(ge=0, le=1)]


class Selection(msgspec.Struct, forbid_unknown_fields=True):
    agent_ids: Annotated[list[Literal["a1", "a2", "a3"]], msgspec.Meta(min_length=1, max_length=2)]
    reason: str
    priority: Annotated[int, msgspec.Meta(ge=1, le=4)]
    note: str | None = None


def client(sim, timeout: float = 5.0) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=sim.base_url, api_key="x", max_retries=0, timeout=timeout)


def gateway(sim, mode: str = "json_schema", timeout_ms: int = 5000) -> ModelGateway:
    env = {"COMPANION_LLM_BASE_URL": sim.base_url, "COMPANION_LLM_MODEL": "sim",
           "COMPANION_LLM_STRUCTURED_OUTPUT": mode, "COMPANION_LLM_TIMEOUT_MS": str(timeout_ms)}
    return ModelGateway(load_llm_settings(env, {}), env=env)


def ask(text: str, purpose: str = "auto_reply", **kw) -> ModelRequest:
    return ModelRequest(messages=[ChatMessage("system", "Suggest replies."), ChatMessage("user", text)], purpose=purpose, **kw)


async def test_plain_reply_says_it_is_simulated_with_realistic_usage(sim):
    result = await gateway(sim).complete(ask("How are you?"))
    assert "simulated" in result.text
    assert not result.usage.estimated and result.usage.input_tokens > 0 and result.usage.output_tokens > 0


async def test_chinese_in_chinese_out(sim):
    gw = gateway(sim)
    plain = await gw.complete(ask("今天有点累"))
    assert detect_language(plain.text) == "zh" and "模拟" in plain.text
    outcome = await complete_struct(gw, ask("今天有点累"), Suggestions)
    assert all(detect_language(s.text) == "zh" for s in outcome.value.suggestions)


@pytest.mark.parametrize("struct_type", [Suggestions, Selection])
@pytest.mark.parametrize("mode", ["json_schema", "json_object", "none"])
async def test_structured_output_is_schema_valid_in_every_mode(sim, struct_type, mode):
    gw = gateway(sim, mode)
    for _ in range(5):
        outcome = await complete_struct(gw, ask("hello there", "select"), struct_type, repairs=0)
        assert isinstance(outcome.value, struct_type)


async def test_models_endpoint_lists_the_simulator(sim):
    models = await client(sim).models.list()
    assert [m.id for m in models.data] == ["companion-simulator"]


async def test_streaming_returns_chunks_and_usage(sim):
    stream = await client(sim).chat.completions.create(
        model="sim", messages=[{"role": "user", "content": "안녕하세요"}], stream=True, stream_options={"include_usage": True}
    )
    parts, usage = [], None
    async for chunk in stream:
        if chunk.choices:
            parts.append(chunk.choices[0].delta.content or "")
        if chunk.usage:
            usage = chunk.usage
    assert detect_language("".join(parts)) == "ko" and len(parts) > 2
    assert usage is not None and usage.completion_tokens > 0


@pytest.mark.parametrize(("fault", "error"), [("500", openai.InternalServerError), ("429", openai.RateLimitError)])
async def test_http_faults_reach_the_real_client(sim, fault, error):
    sim.configure(fault_rate=1.0, faults=[fault])
    with pytest.raises(error):
        await client(sim).chat.completions.create(model="sim", messages=[{"role": "user", "content": "hi"}])


@pytest.mark.parametrize("fault", ["500", "429"])
async def test_http_faults_map_to_model_unavailable(sim, fault):
    sim.configure(fault_rate=1.0, faults=[fault])
    with pytest.raises(ModelUnavailable):
        await gateway(sim).complete(ask("hi"))


async def test_timeout_fault_hangs_past_the_client_timeout(sim):
    sim.configure(fault_rate=1.0, faults=["timeout"])
    started = time.perf_counter()
    with pytest.raises(ModelTimeout):
        await gateway(sim, timeout_ms=200).complete(ask("hi"))
    assert time.perf_counter() - started < 2


@pytest.mark.parametrize("fault", ["invalid_json", "empty", "schema_violation"])
async def test_content_faults_exhaust_repairs_into_invalid_output(sim, fault):
    sim.configure(fault_rate=1.0, faults=[fault])
    with pytest.raises(InvalidModelOutput) as info:
        await complete_struct(gateway(sim), ask("hi"), Selection, repairs=1)
    assert info.value.attempts == 2


async def test_a_content_fault_is_repaired_by_the_next_answer(sim):
    gw = gateway(sim)
    before = sim.stats()["faults"]["invalid_json"]
    request = ask("hi")
    raw = client(sim)
    # Force exactly one invalid answer via the per-request header, then let complete_struct repair.
    bad = await raw.chat.completions.create(
        model="sim", messages=[{"role": "user", "content": "hi"}], extra_headers={"X-Simulator-Fault": "invalid_json"},
        response_format={"type": "json_schema", "json_schema": {"name": "S", "schema": strict_schema(Selection), "strict": True}},
    )
    with pytest.raises(msgspec.DecodeError):
        msgspec.json.decode(bad.choices[0].message.content, type=Selection)
    assert (await complete_struct(gw, request, Selection)).value.priority in range(1, 5)
    assert sim.stats()["faults"]["invalid_json"] == before + 1


async def test_stats_count_requests_and_every_fault_kind(sim):
    before = sim.stats()
    raw = client(sim, timeout=0.3)
    schema_format = {"type": "json_schema", "json_schema": {"name": "S", "schema": strict_schema(Selection), "strict": True}}
    for kind in ("500", "429", "timeout", "invalid_json", "empty", "schema_violation", "cut"):
        try:
            answer = await raw.chat.completions.create(
                model="sim", messages=[{"role": "user", "content": "hi"}], response_format=schema_format,
                extra_headers={"X-Simulator-Fault": kind}, stream=kind == "cut",
            )
            if kind == "cut":
                [c async for c in answer]
        except openai.APIError:
            pass
    after = sim.stats()
    assert after["requests"] == before["requests"] + 7
    assert all(after["faults"][k] == before["faults"][k] + 1 for k in after["faults"])
    over_http = httpx2.get(sim.base_url.removesuffix("/v1") + "/stats").json()
    assert over_http["simulator"] is True and over_http["faults"] == after["faults"]


async def test_fault_rate_is_seeded_and_roughly_respected(sim):
    sim.configure(fault_rate=0.5, faults=["500"], seed=3)
    raw = client(sim)
    failures = 0
    for _ in range(40):
        try:
            await raw.chat.completions.create(model="sim", messages=[{"role": "user", "content": "hi"}])
        except openai.InternalServerError:
            failures += 1
    assert 8 <= failures <= 32


async def test_latency_is_applied(sim):
    sim.configure(latency_ms=120)
    started = time.perf_counter()
    await gateway(sim).complete(ask("hi"))
    assert time.perf_counter() - started >= 0.1
