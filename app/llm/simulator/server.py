"""The LLM simulator: an OpenAI-compatible HTTP server that never pretends to be a real model.

Benchmarks, reliability tests and key-less demos need an endpoint that speaks the real wire
protocol (so the real ``openai`` client and our adapter are exercised) but answers instantly,
deterministically and for free, and that can misbehave on request: HTTP 500/429, hangs past the
client timeout, invalid JSON, empty content, schema-violating JSON, and for streamed requests a
stream cut off half way (no finish reason, no ``[DONE]``). Each fault is counted in ``GET /stats``.
A request header ``X-Simulator-Fault: <kind>`` forces one fault, for tests; ``queue_faults`` makes
the next requests fail in a given order whoever sends them (a retry test: "the first six fail").

Timing: a plain call answers after ``latency_ms`` (± ``jitter_ms``). A streamed call (``stream:
true``) sends its first token after ``ttft_ms`` (± jitter; ``None`` = ``latency_ms``) and the
rest at ``tokens_per_s`` (0 = all at once), one token per SSE chunk (a CJK character, or up to four
other characters). A status fault (500, 429) arrives when the first token would have; a
structured answer is the same schema-valid JSON either way, only cut into chunks.
"""

from __future__ import annotations

import asyncio
import collections
import json
import random
import threading
import time
from typing import Any

import msgspec
from litestar import Litestar, Request, get, post
from litestar.response import Response, Stream

from app.llm.simulator.instances import generate_instance, violate
from app.llm.simulator.language import PLACEHOLDER, REPLY_TAG, detect_language, simulated_string
from app.llm.structured import SCHEMA_PROMPT_MARKER
from app.llm.usage import estimate_tokens, is_cjk

FAULT_KINDS = ("500", "429", "timeout", "invalid_json", "empty", "schema_violation", "cut")
_JSON_ONLY_FAULTS = ("invalid_json", "schema_violation")
_STREAM_ONLY_FAULTS = ("cut",)
SIMULATOR_MODEL = "companion-simulator"


class SimulatorOptions(msgspec.Struct, frozen=True, kw_only=True):
    latency_ms: float = 0.0
    jitter_ms: float = 0.0
    fault_rate: float = 0.0
    faults: tuple[str, ...] = FAULT_KINDS
    seed: int = 1
    hang_s: float = 30.0  # how long a "timeout" fault stalls (ends early when the client leaves)
    ttft_ms: float | None = None  # streamed calls: time to first token; None = latency_ms
    tokens_per_s: float = 0.0  # streamed calls: pace of the chunks after the first; 0 = no pacing

    def __post_init__(self) -> None:
        if self.ttft_ms is not None and self.ttft_ms < 0:
            raise ValueError("ttft_ms must not be negative")
        if self.tokens_per_s < 0:
            raise ValueError("tokens_per_s must not be negative")
        unknown = [f for f in self.faults if f not in FAULT_KINDS]
        if unknown:
            raise ValueError(f"unknown fault kind(s) {unknown}; expected {', '.join(FAULT_KINDS)}")
        if not 0.0 <= self.fault_rate <= 1.0:
            raise ValueError("fault_rate must be between 0 and 1")


class SimulatorState:
    """Options, RNG and counters; shared with the thread runner, hence the lock."""

    def __init__(self, options: SimulatorOptions) -> None:
        self.options = options
        self.rng = random.Random(options.seed)
        self.lock = threading.Lock()
        self.counts: dict[str, Any] = {"requests": 0, "ok": 0, "streamed": 0, "faults": dict.fromkeys(FAULT_KINDS, 0)}
        self.queued: list[str | None] = []  # faults of the next requests, in order (None: answer normally)
        self.received: collections.deque[dict[str, Any]] = collections.deque(maxlen=200)  # the last request bodies

    def queue_faults(self, kinds: list[str | None]) -> None:
        """The next ``len(kinds)`` requests get these faults in order (``None``: no fault), before
        the random draws resume; a kind that does not apply to a request (``cut`` to a plain call,
        ``invalid_json`` to prose) leaves it unfaulted. An empty list clears the queue."""
        unknown = [k for k in kinds if k is not None and k not in FAULT_KINDS]
        if unknown:
            raise ValueError(f"unknown fault kind(s) {unknown}; expected {', '.join(FAULT_KINDS)}")
        with self.lock:
            self.queued = list(kinds)

    def configure(self, **changes: Any) -> None:
        with self.lock:
            self.options = msgspec.structs.replace(self.options, **changes)
            if "seed" in changes:
                self.rng = random.Random(self.options.seed)

    def record(self, body: dict[str, Any]) -> None:
        with self.lock:
            self.received.append(body)

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {**self.counts, "faults": dict(self.counts["faults"]), "simulator": True}

    def next_request(
        self, forced: str | None, wants_json: bool, streamed: bool = False
    ) -> tuple[int, str | None, float, random.Random]:
        """Pick (request number, fault kind or None, seconds until the answer (the first token when
        ``streamed``), per-request RNG)."""
        with self.lock:
            opts = self.options
            self.counts["requests"] += 1
            number = self.counts["requests"]
            fault = forced
            if fault is None and self.queued:
                fault = self.queued.pop(0)
                if (not wants_json and fault in _JSON_ONLY_FAULTS) or (not streamed and fault in _STREAM_ONLY_FAULTS):
                    fault = None
            elif fault is None and opts.fault_rate > 0 and self.rng.random() < opts.fault_rate:
                kinds = [k for k in opts.faults
                         if (wants_json or k not in _JSON_ONLY_FAULTS) and (streamed or k not in _STREAM_ONLY_FAULTS)]
                fault = self.rng.choice(kinds) if kinds else None
            if fault is not None:
                self.counts["faults"][fault] += 1
            else:
                self.counts["ok"] += 1
            if streamed:
                self.counts["streamed"] += 1
            base = opts.ttft_ms if streamed and opts.ttft_ms is not None else opts.latency_ms
            delay = max(0.0, base + self.rng.uniform(-opts.jitter_ms, opts.jitter_ms)) / 1000
            return number, fault, delay, random.Random(f"{opts.seed}:{number}")


def _error(status: int, message: str, kind: str) -> Response[bytes]:
    body = msgspec.json.encode({"error": {"message": f"[simulator] {message}", "type": kind, "code": kind}})
    headers = {"retry-after": "1"} if status == 429 else {}
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def _schema_of(data: dict[str, Any]) -> dict[str, Any] | None:
    """The requested schema: ``response_format.json_schema``, else one embedded in a system prompt."""
    fmt = data.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema") or {}
    for message in data.get("messages", []):
        content = message.get("content")
        if message.get("role") == "system" and isinstance(content, str) and SCHEMA_PROMPT_MARKER in content:
            block = content.split(SCHEMA_PROMPT_MARKER, 1)[1].split("```json", 1)[-1].split("```", 1)[0]
            try:
                return json.loads(block)
            except ValueError:
                return {}
    return {} if fmt.get("type") == "json_object" else None


def _source_text(data: dict[str, Any]) -> str:
    """The text a structured answer may quote: the longest user message (the material under judgement;
    a repair's follow-up instructions are shorter), whose last line the generator copies spans from."""
    texts = [m.get("content") for m in data.get("messages", []) if m.get("role") == "user"]
    return max((t for t in texts if isinstance(t, str)), key=len, default="")


def _content(data: dict[str, Any], fault: str | None, rng: random.Random) -> str:
    user_texts = [m.get("content") for m in data.get("messages", []) if m.get("role") == "user"]
    language = detect_language(user_texts[-1] if user_texts and isinstance(user_texts[-1], str) else "")
    schema = _schema_of(data)
    if fault == "empty":
        return ""
    if schema is None:
        # A varied body, so simulated replies are not duplicates or repeats of each other.
        return f"{REPLY_TAG[language]} {simulated_string(rng, language, 80 if language == 'en' else 24)}"

    value = generate_instance(schema, rng, language, _source_text(data)) if schema else {"simulated": True, "text": PLACEHOLDER[language]}
    if fault == "schema_violation":
        value = violate(value, schema)
    text = json.dumps(value, ensure_ascii=False)
    if fault == "invalid_json":
        text = '{"simulated": ' + text[: len(text) // 2]
    return text


def _usage(data: dict[str, Any], content: str) -> dict[str, int]:
    prompt = sum(estimate_tokens(m.get("content") or "") + 4 for m in data.get("messages", []) if isinstance(m.get("content", ""), str)) + 3
    completion = estimate_tokens(content)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


async def _hang(request: Request[Any, Any, Any], seconds: float) -> None:
    """Stall like a stuck upstream, but stop as soon as the client gives up and disconnects."""

    async def until_disconnect() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    try:
        await asyncio.wait_for(until_disconnect(), seconds)
    except TimeoutError:
        pass


def stream_tokens(text: str) -> list[str]:
    """``text`` in token-sized pieces, as a server streams it: each CJK character alone, other text
    in runs of up to four characters that start a new piece at each space. They join back into ``text``."""
    pieces: list[str] = []
    current = ""
    for ch in text:
        if is_cjk(ch):
            if current:
                pieces.append(current)
            pieces.append(ch)
            current = ""
        elif current and (len(current) >= 4 or (ch == " " and not current.isspace())):
            pieces.append(current)
            current = ch
        else:
            current += ch
    if current:
        pieces.append(current)
    return pieces


def _sse(
    completion_id: str, model: str, content: str, usage: dict[str, int], include_usage: bool,
    tokens_per_s: float, cut: bool = False,
) -> Any:
    """OpenAI chat-completion chunks: role, one chunk per token (paced), finish, usage, ``[DONE]``.
    ``cut`` stops after half the tokens without a finish reason or ``[DONE]``, as a dropped stream."""
    created = int(time.time())

    def chunk(delta: dict[str, Any] | None, finish: str | None, **extra: Any) -> bytes:
        body = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
                "system_fingerprint": SIMULATOR_MODEL,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}] if delta is not None else [],
                **extra}
        if include_usage and "usage" not in extra:
            body["usage"] = None  # as OpenAI: every chunk carries the field, only the last one a value
        return b"data: " + msgspec.json.encode(body) + b"\n\n"

    tokens = stream_tokens(content)
    if cut:
        tokens = tokens[: len(tokens) // 2]
    gap = 1.0 / tokens_per_s if tokens_per_s > 0 else 0.0

    async def gen() -> Any:
        yield chunk({"role": "assistant", "content": "", "refusal": None}, None)
        for i, token in enumerate(tokens):
            if i and gap:
                await asyncio.sleep(gap)
            yield chunk({"content": token}, None)
        if cut:
            return
        yield chunk({}, "stop")
        if include_usage:
            yield chunk(None, None, usage=usage)
        yield b"data: [DONE]\n\n"

    return gen()


def create_simulator_app(options: SimulatorOptions | None = None, state: SimulatorState | None = None) -> Litestar:
    state = state or SimulatorState(options or SimulatorOptions())

    @post("/v1/chat/completions", status_code=200)
    async def chat_completions(request: Request[Any, Any, Any], data: dict[str, Any]) -> Response[Any]:
        if not isinstance(data.get("messages"), list) or not data["messages"]:
            return _error(400, "messages must be a non-empty list", "invalid_request_error")
        forced = request.headers.get("x-simulator-fault")
        if forced is not None and forced not in FAULT_KINDS:
            return _error(400, f"unknown X-Simulator-Fault {forced!r}", "invalid_request_error")
        streamed = bool(data.get("stream"))
        if forced in _STREAM_ONLY_FAULTS and not streamed:
            return _error(400, f"X-Simulator-Fault {forced!r} applies to streamed requests only", "invalid_request_error")
        wants_json = _schema_of(data) is not None
        state.record(data)  # what it was sent, for wire tests (``SimulatorHandle.received``)
        number, fault, delay, rng = state.next_request(forced, wants_json, streamed)
        if delay:
            await asyncio.sleep(delay)
        if fault == "500":
            return _error(500, "simulated internal server error", "server_error")
        if fault == "429":
            return _error(429, "simulated rate limit", "rate_limit_exceeded")
        if fault == "timeout":
            await _hang(request, state.options.hang_s)
            return _error(504, "simulated timeout", "timeout")
        content = _content(data, fault, rng)
        usage = _usage(data, content)
        model = data.get("model") or SIMULATOR_MODEL
        completion_id = f"chatcmpl-sim-{number}"
        headers = {"x-companion-simulator": "1"}
        if streamed:
            include_usage = bool((data.get("stream_options") or {}).get("include_usage"))
            events = _sse(completion_id, model, content, usage, include_usage, state.options.tokens_per_s, cut=fault == "cut")
            return Stream(events, media_type="text/event-stream", headers={**headers, "cache-control": "no-cache"})
        body = {
            "id": completion_id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": SIMULATOR_MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": None},
                         "finish_reason": "stop", "logprobs": None}],
            "usage": usage,
        }
        return Response(msgspec.json.encode(body), media_type="application/json", headers=headers)

    @get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": SIMULATOR_MODEL, "object": "model", "created": 0, "owned_by": "companion-simulator"}]}

    @get("/stats")
    async def stats() -> dict[str, Any]:
        return state.stats()

    app = Litestar([chat_completions, models, stats], debug=False, logging_config=None)
    app.state.simulator = state
    return app
