"""Token streaming against a real llama.cpp ``llama-server``: the gateway's ``stream=True`` request
is accepted, the SSE chunks arrive as several deltas that join into the reply, and the usage chunk
(``stream_options.include_usage``) or an estimate fills the result. Budgets are tiny: a CPU server
is slow, and this proves the wire, not the prose."""

from __future__ import annotations

import time

from app.llm.config import load_llm_settings
from app.llm.gateway import ModelGateway
from app.llm.port import ChatMessage, ModelRequest

MAX_TOKENS = 24


def gateway(base_url: str, *, stream: bool = True) -> ModelGateway:
    toml = {"llm": {"models": {"default": {"baseUrl": base_url, "model": "smollm2", "timeoutMs": 120_000,
                                           "maxTokens": MAX_TOKENS, "stream": stream}}}}
    return ModelGateway(load_llm_settings({}, toml), env={})


def ask(text: str) -> ModelRequest:
    return ModelRequest(messages=[ChatMessage("system", "You are a friendly companion. Answer in one short sentence."),
                                  ChatMessage("user", text)], purpose="actor", temperature=0.0)


async def test_a_short_reply_streams_token_by_token(llama_base_url: str):
    gw = gateway(llama_base_url)
    deltas: list[tuple[float, str]] = []

    async def on_delta(piece: str) -> None:
        deltas.append((time.perf_counter(), piece))

    started = time.perf_counter()
    try:
        result = await gw.stream(ask("Hi! How was your day?"), on_delta)
    finally:
        await gw.aclose()
    text = "".join(piece for _, piece in deltas)
    assert result.text.strip() and text == result.text
    assert len(deltas) > 1, "a real server sends the reply in several chunks"
    assert deltas[0][0] < deltas[-1][0], "the first piece came before the last one"
    assert result.finish_reason in ("stop", "length")
    assert result.first_token_ms is not None and result.first_token_ms <= (deltas[0][0] - started) * 1000 + 1
    assert 0 < result.usage.output_tokens <= MAX_TOKENS + 1 or result.usage.estimated
    assert result.usage.input_tokens > 0


async def test_stream_false_gives_the_reply_in_one_delta(llama_base_url: str):
    gw = gateway(llama_base_url, stream=False)
    deltas: list[str] = []

    async def on_delta(piece: str) -> None:
        deltas.append(piece)

    try:
        result = await gw.stream(ask("Hello!"), on_delta)
    finally:
        await gw.aclose()
    assert deltas == [result.text] and result.text.strip() and result.first_token_ms is None
