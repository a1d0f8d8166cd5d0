"""Structured output: Struct → wire schema → decoded, validated value, with one bounded repair loop.

Every LLM output the app and the libraries consume is a msgspec Struct. ``complete_struct`` is the
only place that turns one into a request (``app.llm.schema.wire_schema`` with the caller's
per-request constraints, a token budget sized to that schema), decodes the answer, runs the
stage's semantic check and repairs. A repair says what was wrong (the decoder's or the check's
words), never resends an answer that the token budget cut off, and changes the request (a
warmer temperature), so it cannot get the identical answer back. After the budget,
``InvalidModelOutput`` carries every problem so the caller can fall back and record why.

Any object with a ``complete(request)`` coroutine gets ``complete_struct`` from ``Structured``
(mixin) or ``structured(model)`` (wrapper); that is how the libraries' ports reach this loop. Both
also give it ``stream(request, on_delta)`` (the wrapped model's own, else the completed text in a
few deltas); structured calls themselves are never streamed.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

import msgspec

from app.errors import InvalidModelOutput
from app.llm.port import ChatMessage, ModelRequest, ModelResult, OnDelta, ResponseSchema, Usage
from app.llm.schema import TOKENS_PER_CHAR, TOKENS_PER_CJK_CHAR, Constraints, token_budget, wire_schema
from app.llm.streaming import stream_by_complete
from app.llm.usage import add_usage, cjk_count
from app.metrics import record_repair, record_struct_failure
from story.auto_reply.degenerate import degenerate_problem

T = TypeVar("T")
SCHEMA_PROMPT_MARKER = "Reply with one JSON value that matches this JSON Schema"
_FENCE = re.compile(r"^```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?```$", re.DOTALL)


class Attempt(msgspec.Struct, frozen=True):
    attempt: int
    problem: str | None
    ms: float
    finish_reason: str | None = None


class StructOutcome(msgspec.Struct, Generic[T], frozen=True):
    value: T
    usage: Usage
    attempts: list[Attempt]
    model: str | None = None  # the model that gave the accepted answer


def schema_instruction(name: str, schema: dict[str, Any]) -> str:
    """Schema as prompt text, for providers without ``json_schema`` support (and the simulator)."""
    body = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    return f"{SCHEMA_PROMPT_MARKER} ({name}):\n```json\n{body}\n```\nReply with the JSON only, no prose."


def decode_text(text: str, struct_type: type[T]) -> T:
    """Decode model text, tolerating a surrounding Markdown code fence."""
    return msgspec.json.decode(_unfenced(text), type=struct_type)


def _unfenced(text: str) -> str:
    stripped = text.strip()
    match = _FENCE.match(stripped)
    return match.group(1).strip() if match else stripped


REPAIR_TEMPERATURE_STEP = 0.3  # a repair at the same temperature and prompt got the same answer back
LOOP_REPAIR_PENALTY = 0.5
"""``frequency_penalty`` of the repair after an answer that looped (a string of it degenerate, or cut
off by the budget). Qwen2.5-0.5B's first world for the joker said "今天，我和你开始聊天。" over and over in
its foreground; shown that answer again and told it looped, it wrote the loop again, longer. Moderate:
a JSON answer repeats its keys, and a provider that follows the schema only by the prompt still has to."""
MAX_STRUCT_TOKENS = 4096
TRUNCATED = "length"


def build_request(
    request: Any, struct_type: Any, constraints: Constraints | None = None, name: str | None = None
) -> ModelRequest:
    """Copy any port-shaped request into ours with the wire schema of ``struct_type`` and a budget."""
    schema = wire_schema(struct_type, constraints)
    per_char = TOKENS_PER_CJK_CHAR if _mostly_cjk(request.messages) else TOKENS_PER_CHAR
    budget = getattr(request, "max_tokens", None) or min(MAX_STRUCT_TOKENS, token_budget(schema, per_char))
    return ModelRequest(
        messages=[ChatMessage(role=m.role, content=m.content) for m in request.messages],
        purpose=request.purpose,
        response_schema=ResponseSchema(name=name or _schema_name(struct_type), schema=schema),
        temperature=getattr(request, "temperature", None),
        max_tokens=budget,
        timeout_s=getattr(request, "timeout_s", None),
        model_config_id=getattr(request, "model_config_id", None),
    )


_NOT_LETTER = re.compile(r"[\W\d_]+")


def _mostly_cjk(messages: Any) -> bool:
    """The answer is written in the prompt's language: a CJK prompt gets the CJK token budget."""
    text = "".join(m.content for m in messages if m.role != "system")[-2000:] or "".join(m.content for m in messages)
    letters = _NOT_LETTER.sub("", text)  # CJK characters are letters (isalpha) too
    return bool(letters) and cjk_count(letters) / len(letters) > 0.2


def _schema_name(struct_type: Any) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", getattr(struct_type, "__name__", "output")).lower()


def _problem_of(
    text: str, finish_reason: str | None, struct_type: type[T], validate: Callable[[T], list[str]] | None
) -> tuple[T | None, str | None]:
    if not text.strip():
        return None, "the reply was empty"
    try:
        value = decode_text(text, struct_type)
    except msgspec.ValidationError as exc:
        return None, f"the JSON does not match the schema: {exc}"
    except msgspec.DecodeError as exc:
        if finish_reason == TRUNCATED:
            return None, "the reply was cut off by the token limit before the JSON was complete"
        return None, f"the reply is not valid JSON: {exc}"
    problems = list(validate(value)) if validate is not None else []
    if problems:
        return None, "; ".join(problems)
    return value, None


def _looped(text: str, finish_reason: str | None) -> bool:
    """The answer ran to its budget, or one of its strings is degenerate (a sentence again and again)."""
    if finish_reason == TRUNCATED:
        return True
    try:
        value = json.loads(_unfenced(text))
    except ValueError:
        return False
    return any(degenerate_problem(s) is not None for s in _strings(value) if s.strip())


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _repair_turns(text: str, finish_reason: str | None, problem: str, note: str | None,
                  looped: bool = False) -> list[ChatMessage]:  # fmt: skip
    """The conversation added for a repair. A cut-off or looping answer is not resent: it only
    fills the context, and a small model shown its loop writes it again."""
    ask = "Reply again with only the corrected JSON, matching the schema exactly."
    if finish_reason == TRUNCATED or looped:
        ask = ("Reply again with only the JSON, and keep every string short so it fits." if finish_reason == TRUNCATED
               else "Reply again with only the JSON; say each thing once, in a few words.")  # fmt: skip
        stop = "." if finish_reason == TRUNCATED else ""  # the cut-off problem has no full stop of its own
        turns = [ChatMessage(role="user", content=f"Your previous reply was invalid: {problem}{stop}\n{ask}")]
    else:
        turns = [
            ChatMessage(role="assistant", content=(text or "(empty)")[:4000]),
            ChatMessage(role="user", content=f"Your previous reply was invalid: {problem}\n{ask}"),
        ]
    if note:
        turns.append(ChatMessage(role="user", content=note))
    return turns


def _warmer(temperature: float | None, attempt: int) -> float:
    return round(min(1.0, (temperature or 0.0) + REPAIR_TEMPERATURE_STEP * attempt), 3)


async def complete_struct(
    model: Any,
    request: Any,
    struct_type: type[T],
    *,
    constraints: Constraints | None = None,
    repairs: int = 1,
    validate: Callable[[T], list[str]] | None = None,
    repair_note: Callable[[list[str]], str | None] | None = None,
    schema_name: str | None = None,
) -> StructOutcome[T]:
    """Ask ``model`` for a ``struct_type``; at most ``repairs`` extra attempts after a bad answer.

    Model errors (timeout, unavailable, refused, not configured, context overflow) propagate
    unchanged: a repair cannot fix them and the caller's fallback decides.
    """
    base = build_request(request, struct_type, constraints, schema_name)
    current = base
    usage = Usage()
    attempts: list[Attempt] = []
    problems: list[str] = []
    for number in range(1, repairs + 2):
        started = time.perf_counter()
        if number > 1:
            record_repair(str(getattr(request, "purpose", "")))
        result = await model.complete(current)
        usage = add_usage(usage, getattr(result, "usage", None) or Usage(estimated=True))
        finish = getattr(result, "finish_reason", None)
        value, problem = _problem_of(result.text or "", finish, struct_type, validate)
        attempts.append(Attempt(number, problem, round((time.perf_counter() - started) * 1000, 3), finish))
        if problem is None:
            return StructOutcome(value=value, usage=usage, attempts=attempts,  # type: ignore[arg-type]
                                 model=getattr(result, "model", None))
        problems.append(problem)
        note = repair_note(problems) if repair_note is not None else None
        looped = _looped(result.text or "", finish)
        current = msgspec.structs.replace(
            base,
            messages=[*base.messages, *_repair_turns(result.text or "", finish, problem, note, looped)],
            temperature=_warmer(base.temperature, number),
            frequency_penalty=LOOP_REPAIR_PENALTY if looped else base.frequency_penalty,
        )
    error = InvalidModelOutput(len(attempts), problems)
    error.usage = usage  # spent tokens still count towards budgets and analytics
    error.diagnostics = attempts
    error.model = getattr(result, "model", None)
    record_struct_failure(str(getattr(request, "purpose", "")))
    raise error


class Structured:
    """Mixin: ``complete_struct`` for any class with ``complete`` (gateway, fakes), and a ``stream``
    that hands the completed text out in a few deltas (the gateway overrides it with real streaming).
    Structured calls are never streamed: a partial JSON value is of no use to anyone."""

    async def complete_struct(self, request: Any, output_type: type[T], **options: Any) -> StructOutcome[T]:
        return await complete_struct(self, request, output_type, **options)

    async def stream(self, request: Any, on_delta: OnDelta) -> ModelResult:
        return await stream_by_complete(self.complete, request, on_delta)  # type: ignore[attr-defined]


class _StructuredModel(Structured):
    def __init__(self, model: Any) -> None:
        self.model = model

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    async def complete(self, request: Any) -> Any:
        return await self.model.complete(request)

    async def stream(self, request: Any, on_delta: OnDelta) -> ModelResult:
        inner = getattr(self.model, "stream", None)
        if callable(inner):
            return await inner(request, on_delta)
        return await stream_by_complete(self.model.complete, request, on_delta)


def structured(model: Any) -> Any:
    """``model`` with ``complete_struct``: text-level fakes and wrappers join the one loop this way."""
    return model if callable(getattr(model, "complete_struct", None)) else _StructuredModel(model)
