"""Structured output: Struct → strict JSON schema → decoded, validated value, with bounded repairs.

Every LLM output the app consumes is a msgspec Struct. The schema sent to the model is generated
from that Struct and fixed up for OpenAI strict mode; the answer is decoded with msgspec and then
checked by the stage's semantic validator. A failure is shown back to the model ("your previous
reply was invalid because ...") a bounded number of times, then ``InvalidModelOutput`` carries
every problem so the caller can fall back and record why.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import msgspec

from app.errors import InvalidModelOutput
from app.llm.port import ChatMessage, ModelRequest, ResponseSchema, Usage
from app.llm.usage import add_usage

T = TypeVar("T")
SCHEMA_PROMPT_MARKER = "Reply with one JSON value that matches this JSON Schema"
_FENCE = re.compile(r"^```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?```$", re.DOTALL)


class Attempt(msgspec.Struct, frozen=True):
    attempt: int
    problem: str | None
    ms: float


class StructOutcome(msgspec.Struct, Generic[T], frozen=True):
    value: T
    usage: Usage
    attempts: list[Attempt]


def schema_instruction(name: str, schema: dict[str, Any]) -> str:
    """Schema as prompt text, for providers without ``json_schema`` support (and the simulator)."""
    body = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    return f"{SCHEMA_PROMPT_MARKER} ({name}):\n```json\n{body}\n```\nReply with the JSON only, no prose."


def strict_schema(struct_type: Any) -> dict[str, Any]:
    """``msgspec.json.schema`` fixed up for strict mode.

    Inline the root ``$ref``, make every property required, forbid additional properties on
    Struct objects, and drop ``default`` (strict mode rejects it). ``$defs`` stay for nested
    Structs that are referenced elsewhere.
    """
    schema = msgspec.json.schema(struct_type)
    defs: dict[str, Any] = schema.pop("$defs", {})
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and len(schema) == 1:
        root_name = ref.removeprefix("#/$defs/")
        schema = dict(defs[root_name])
        if not _references(schema, ref) and not any(_references(d, ref) for n, d in defs.items() if n != root_name):
            defs.pop(root_name)
    if defs:
        schema["$defs"] = defs
    return _fix(schema)


def _references(node: Any, ref: str) -> bool:
    if isinstance(node, dict):
        return node.get("$ref") == ref or any(_references(v, ref) for v in node.values())
    if isinstance(node, list):
        return any(_references(v, ref) for v in node)
    return False


def _fix(node: Any) -> Any:
    if isinstance(node, list):
        return [_fix(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: _fix(sub) for name, sub in value.items()}  # names, not keywords
        elif key not in ("default", "discriminator"):
            out[key] = _fix(value)
    if isinstance(out.get("properties"), dict):
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


def decode_text(text: str, struct_type: type[T]) -> T:
    """Decode model text, tolerating a surrounding Markdown code fence."""
    stripped = text.strip()
    match = _FENCE.match(stripped)
    if match:
        stripped = match.group(1).strip()
    return msgspec.json.decode(stripped, type=struct_type)


def _problem_of(text: str, finish_reason: str | None, struct_type: type[T], validate: Callable[[T], list[str]] | None) -> tuple[T | None, str | None]:
    if not text.strip():
        return None, "the reply was empty"
    try:
        value = decode_text(text, struct_type)
    except msgspec.ValidationError as exc:
        return None, f"the JSON does not match the schema: {exc}"
    except msgspec.DecodeError as exc:
        cut = " (the output was cut off: finish_reason=length)" if finish_reason == "length" else ""
        return None, f"the reply is not valid JSON: {exc}{cut}"
    problems = list(validate(value)) if validate is not None else []
    if problems:
        return None, "; ".join(problems)
    return value, None


def _as_request(request: Any, struct_type: Any) -> ModelRequest:
    """Copy any port-shaped request into our Struct, adding the response schema if missing."""
    schema = getattr(request, "response_schema", None)
    if schema is None:
        schema = ResponseSchema(name=getattr(struct_type, "__name__", "output"), schema=strict_schema(struct_type))
    else:
        schema = ResponseSchema(name=schema.name, schema=schema.schema)
    return ModelRequest(
        messages=[ChatMessage(role=m.role, content=m.content) for m in request.messages],
        purpose=request.purpose,
        response_schema=schema,
        temperature=getattr(request, "temperature", None),
        max_tokens=getattr(request, "max_tokens", None),
        timeout_s=getattr(request, "timeout_s", None),
        model_config_id=getattr(request, "model_config_id", None),
    )


def _repair_message(problem: str) -> str:
    return (
        f"Your previous reply was invalid: {problem}\n"
        "Reply again with only the corrected JSON, matching the schema exactly."
    )


async def complete_struct(
    model: Any,
    request: Any,
    struct_type: type[T],
    repairs: int = 1,
    validate: Callable[[T], list[str]] | None = None,
) -> StructOutcome[T]:
    """Ask ``model`` for a ``struct_type``; at most ``repairs`` extra attempts after a bad answer.

    Model errors (timeout, unavailable, refused, not configured) propagate unchanged: a repair
    cannot fix them and the caller's fallback decides.
    """
    base = _as_request(request, struct_type)
    current = base
    usage = Usage()
    attempts: list[Attempt] = []
    problems: list[str] = []
    for number in range(1, repairs + 2):
        started = time.perf_counter()
        result = await model.complete(current)
        usage = add_usage(usage, result.usage)
        value, problem = _problem_of(result.text, result.finish_reason, struct_type, validate)
        attempts.append(Attempt(number, problem, round((time.perf_counter() - started) * 1000, 3)))
        if problem is None:
            return StructOutcome(value=value, usage=usage, attempts=attempts)  # type: ignore[arg-type]
        problems.append(problem)
        repair = [
            ChatMessage(role="assistant", content=result.text or "(empty)"),
            ChatMessage(role="user", content=_repair_message(problem)),
        ]
        current = msgspec.structs.replace(base, messages=[*base.messages, *repair])
    error = InvalidModelOutput(len(attempts), problems)
    error.usage = usage  # spent tokens still count towards budgets and analytics
    error.diagnostics = attempts
    raise error
