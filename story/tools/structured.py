"""Structured model calls: strict JSON schema from a Struct, decode, semantic check, one repair.

The budget is the seed's: at most one repair, so at most two model responses per call. Both
attempts share the tool call's timeout (its expiry is recorded as ``model_timeout``). Any exception
from the model except cancellation is a model failure: it is recorded, never raised, so each tool
can apply its own failure policy. Cancellation (the task's, or the context's when it can be
awaited) propagates at once, and since tools only return new snapshots nothing is half-applied.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable, TypeVar

import msgspec

from story.ports import ChatMessage, ModelRequest, ResponseSchema
from story.tools.common import Diagnostic, StoryContext, StoryModelConfig, Usage

T = TypeVar("T")
MAX_RESPONSES = 2


def strict_schema(struct_type: type) -> dict[str, Any]:
    """msgspec schema fixed up for strict mode: inline root ``$ref``, all required, no defaults."""
    raw = msgspec.json.schema(struct_type)
    defs = raw.get("$defs", {})

    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: fix(v) for k, v in node.items() if k not in ("default", "title")}
            if out.get("type") == "object" and "properties" in out:
                out["required"] = list(out["properties"])
                out["additionalProperties"] = False
            return out
        if isinstance(node, list):
            return [fix(v) for v in node]
        return node

    root, root_name = raw, None
    if "$ref" in raw:
        root_name = raw["$ref"].rsplit("/", 1)[-1]
        root = dict(defs[root_name])
    fixed = fix(root)
    other_defs = {k: fix(v) for k, v in defs.items() if k != root_name}
    if other_defs:
        fixed["$defs"] = other_defs
    return fixed


class StructuredOutcome(msgspec.Struct):
    value: Any = None
    usage: Usage = Usage()
    diagnostics: list[Diagnostic] = []
    responses: int = 0

    @property
    def ok(self) -> bool:
        return self.value is not None


def _usage_of(result: Any) -> Usage:
    u = getattr(result, "usage", None)
    if u is None:
        return Usage(calls=1, estimated=True)
    return Usage(int(u.input_tokens), int(u.output_tokens), bool(u.estimated), 1)


async def _complete(config: StoryModelConfig, request: ModelRequest, ctx: StoryContext) -> Any:
    """The model call; a context cancellation that can be awaited (``asyncio.Event``) aborts it."""
    wait = getattr(ctx.cancellation, "wait", None)
    if wait is None or not asyncio.iscoroutinefunction(wait):
        return await config.model.complete(request)
    call = asyncio.ensure_future(config.model.complete(request))
    cancelled = asyncio.ensure_future(wait())
    try:
        await asyncio.wait({call, cancelled}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for f in (call, cancelled):
            if not f.done():
                f.cancel()
        await asyncio.gather(call, cancelled, return_exceptions=True)
    if call.cancelled() or ctx.cancellation.is_set():
        raise asyncio.CancelledError(f"story call {ctx.request_id} cancelled")
    return call.result()


async def call_structured(
    config: StoryModelConfig,
    ctx: StoryContext,
    purpose: str,
    messages: list[ChatMessage],
    output_type: type[T],
    check: Callable[[T], list[str]] | None = None,
    temperature: float | None = None,
) -> StructuredOutcome:
    """Ask for ``output_type``; on a decode or semantic error send it back once, then give up."""
    schema = ResponseSchema(name=output_type.__name__, schema=strict_schema(output_type))
    convo = list(messages)
    outcome = StructuredOutcome()
    deadline = None if config.timeout_s is None else time.monotonic() + config.timeout_s
    for attempt in range(MAX_RESPONSES):
        ctx.check_cancelled()
        remaining = None if deadline is None else max(0.001, deadline - time.monotonic())
        request = ModelRequest(
            messages=convo, purpose=purpose, response_schema=schema, temperature=temperature,
            timeout_s=remaining, model_config_id=config.model_config_id,
        )
        budget = asyncio.timeout(remaining)
        try:
            async with budget:
                result = await _complete(config, request, ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - any model error is a failure for Story
            timed_out = budget.expired()
            outcome.diagnostics.append(Diagnostic(
                "model_timeout" if timed_out else "model_failed",
                f"over the {config.timeout_s} s budget" if timed_out else f"{type(exc).__name__}: {exc}"[:500],
                {"purpose": purpose, "attempt": attempt + 1, "error_type": type(exc).__name__,
                 "timeout_s": config.timeout_s},
            ))
            return outcome
        outcome.responses += 1
        outcome.usage = outcome.usage.plus(_usage_of(result))
        text = result.text or ""
        try:
            value = msgspec.json.decode(text.encode(), type=output_type)
            problems = check(value) if check is not None else []
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            value, problems = None, [f"invalid JSON for {output_type.__name__}: {exc}"]
        if not problems:
            outcome.value = value
            return outcome
        outcome.diagnostics.append(Diagnostic(
            "invalid_model_output", "; ".join(problems)[:1000], {"purpose": purpose, "attempt": attempt + 1},
        ))
        convo = convo + [
            ChatMessage("assistant", text[:8000]),
            ChatMessage("user", "Your answer was rejected: " + "; ".join(problems)[:2000]
                        + ". Reply again with only JSON that satisfies the schema and these rules."),
        ]
    outcome.diagnostics.append(Diagnostic("repair_exhausted", "", {"purpose": purpose, "responses": outcome.responses}))
    return outcome
