"""Structured model calls through the host's one structured path, with the seed's budget.

The library declares the output Struct, per-request constraints (ids as ``enum``s, list and
string bounds) and its repair budget; the host's ``complete_struct`` builds the wire schema,
decodes, checks and repairs (``story.ports.StructuredModel``). The budget is the seed's: at most
one repair, so at most two model responses per call, sharing the tool call's timeout (its expiry
is recorded as ``model_timeout``). An exception from the model is a model failure: it is
recorded, not raised, so each tool can apply its own failure policy, unless the host's
``StoryModelConfig.is_recoverable_model_error`` says it is not recoverable; then it is raised
unchanged. The host's spent repair budget and the call's own timeout are always recoverable.
Cancellation (the task's, or the context's when it can be awaited) propagates at once, and
since tools only return new snapshots nothing is half-applied.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Callable, TypeVar

import msgspec

from story.ports import ChatMessage, ModelRequest
from story.tools.common import Diagnostic, StoryContext, StoryModelConfig, Usage

T = TypeVar("T")
MAX_RESPONSES = 2


class StructuredOutcome(msgspec.Struct):
    value: Any = None
    usage: Usage = Usage()
    diagnostics: list[Diagnostic] = []
    responses: int = 0

    @property
    def ok(self) -> bool:
        return self.value is not None


def _usage_of(result: Any, calls: int) -> Usage:
    u = getattr(result, "usage", None)
    if u is None:
        return Usage(calls=calls, estimated=True)
    return Usage(int(u.input_tokens), int(u.output_tokens), bool(u.estimated), calls)


async def _complete(call: Any, ctx: StoryContext) -> Any:
    """Run the model call; a context cancellation that can be awaited (``asyncio.Event``) aborts it."""
    wait = getattr(ctx.cancellation, "wait", None)
    if wait is None or not asyncio.iscoroutinefunction(wait):
        return await call
    task = asyncio.ensure_future(call)
    cancelled = asyncio.ensure_future(wait())
    try:
        await asyncio.wait({task, cancelled}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for f in (task, cancelled):
            if not f.done():
                f.cancel()
        await asyncio.gather(task, cancelled, return_exceptions=True)
    if task.cancelled() or ctx.cancellation.is_set():
        raise asyncio.CancelledError(f"story call {ctx.request_id} cancelled")
    return task.result()


async def call_structured(
    config: StoryModelConfig,
    ctx: StoryContext,
    purpose: str,
    messages: list[ChatMessage],
    output_type: type[T],
    check: Callable[[T], list[str]] | None = None,
    temperature: float | None = None,
    constraints: Mapping[str, Mapping[str, Any]] | None = None,
) -> StructuredOutcome:
    """Ask for ``output_type``; on a decode or semantic error the host repairs once, then gives up."""
    ctx.check_cancelled()
    outcome = StructuredOutcome()
    request = ModelRequest(messages=list(messages), purpose=purpose, temperature=temperature,
                           timeout_s=config.timeout_s, model_config_id=config.model_config_id)  # fmt: skip
    budget = asyncio.timeout(config.timeout_s)
    try:
        async with budget:
            result = await _complete(config.model.complete_struct(
                request, output_type, constraints=constraints, repairs=MAX_RESPONSES - 1, validate=check,
            ), ctx)  # fmt: skip
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - a model error is a failure for Story unless the host says otherwise
        timed_out = budget.expired()
        if not timed_out and not _repair_spent(exc) and not _recoverable(config, exc):
            raise
        _record_failure(outcome, exc, purpose, config, timed_out=timed_out)
        return outcome
    attempts = list(getattr(result, "attempts", None) or [None])
    outcome.responses = len(attempts)
    outcome.usage = _usage_of(result, len(attempts))
    for number, attempt in enumerate(attempts[:-1], start=1):
        _invalid(outcome, purpose, number, getattr(attempt, "problem", None))
    outcome.value = result.value
    return outcome


def _invalid(outcome: StructuredOutcome, purpose: str, attempt: int, problem: str | None) -> None:
    outcome.diagnostics.append(Diagnostic(
        "invalid_model_output", (problem or "")[:1000], {"purpose": purpose, "attempt": attempt},
    ))  # fmt: skip


def _repair_spent(exc: Exception) -> bool:
    """The host's structured path gave up after the repair: its error carries one problem per response."""
    return isinstance(getattr(exc, "problems", None), list)


def _recoverable(config: StoryModelConfig, exc: Exception) -> bool:
    classify = config.is_recoverable_model_error
    return True if classify is None else bool(classify(exc))


def _record_failure(outcome: StructuredOutcome, exc: Exception, purpose: str, config: StoryModelConfig,
                    *, timed_out: bool) -> None:  # fmt: skip
    problems = getattr(exc, "problems", None)
    if _repair_spent(exc) and not timed_out:
        outcome.responses = len(problems)
        outcome.usage = _usage_of(exc, len(problems))
        for number, problem in enumerate(problems, start=1):
            _invalid(outcome, purpose, number, str(problem))
        outcome.diagnostics.append(Diagnostic("repair_exhausted", "", {"purpose": purpose, "responses": len(problems)}))
        return
    outcome.diagnostics.append(Diagnostic(
        "model_timeout" if timed_out else "model_failed",
        f"over the {config.timeout_s} s budget" if timed_out else f"{type(exc).__name__}: {exc}"[:500],
        {"purpose": purpose, "error_type": type(exc).__name__, "timeout_s": config.timeout_s,
         "error_code": getattr(exc, "code", None)},
    ))  # fmt: skip
