"""What one turn spent on models: every call the turn's tasks made, by stage (its ``purpose``).

``pipeline.run`` opens a ``CallLedger`` for the turn (``use_ledger``); every gateway call made in
that task or in a task it starts (contextvars are inherited) adds one ``CallEntry`` through
``record_call`` (from ``app.metrics.observed_model_call``, and from the test fakes). The turn
result reports ``cost()``: calls and input/output tokens per stage, and how many calls had ended
before the first words reached the user. A call cancelled before it answered (a speculative reply
the decision did not keep) is counted: a hosted API bills what it already generated.

``first_call_signal`` lets a task learn when its first model call goes out (``call_starting``,
from the same two wrappers): the turn sends a certain speaker's request before its bookkeeping
calls (``app.turns.pipeline``).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import Iterator
from typing import Any

import msgspec

from app.llm.port import Usage


class CallEntry(msgspec.Struct, frozen=True):
    stage: str  # the request's purpose, e.g. "emotion", "combined", "actor", "story.plan_cycle"
    started: float  # perf_counter
    ended: float
    outcome: str  # ok | cancelled | an error code
    usage: Usage = Usage()


class CallLedger:
    def __init__(self) -> None:
        self.entries: list[CallEntry] = []

    def add(self, entry: CallEntry) -> None:
        self.entries.append(entry)

    def cost(self, first_delta_at: float | None) -> dict[str, Any]:
        """``first_delta_at``: perf_counter of the turn's first ``message.delta`` (None: none)."""
        by_stage: dict[str, dict[str, int]] = {}
        for e in self.entries:
            row = by_stage.setdefault(e.stage, {"calls": 0, "inputTokens": 0, "outputTokens": 0, "cancelled": 0})
            row["calls"] += 1
            row["inputTokens"] += e.usage.input_tokens
            row["outputTokens"] += e.usage.output_tokens
            row["cancelled"] += e.outcome == "cancelled"
        before = None if first_delta_at is None else sum(1 for e in self.entries if e.ended <= first_delta_at)
        return {
            "modelCalls": len(self.entries),
            "inputTokens": sum(e.usage.input_tokens for e in self.entries),
            "outputTokens": sum(e.usage.output_tokens for e in self.entries),
            "callsBeforeFirstToken": before,
            "byStage": dict(sorted(by_stage.items())),
        }


_LEDGER: contextvars.ContextVar[CallLedger | None] = contextvars.ContextVar("turn_call_ledger", default=None)
_CALLING: contextvars.ContextVar[asyncio.Event | None] = contextvars.ContextVar("first_call_signal", default=None)


@contextlib.contextmanager
def use_ledger(ledger: CallLedger) -> Iterator[CallLedger]:
    """Calls made in this context (and tasks started from it) are recorded in ``ledger``."""
    token = _LEDGER.set(ledger)
    try:
        yield ledger
    finally:
        _LEDGER.reset(token)


@contextlib.contextmanager
def first_call_signal(event: asyncio.Event) -> Iterator[None]:
    """``event`` is set when a model call made in this context (or a task started from it) starts."""
    token = _CALLING.set(event)
    try:
        yield
    finally:
        _CALLING.reset(token)


def call_starting() -> None:
    event = _CALLING.get()
    if event is not None:
        event.set()


def record_call(request: Any, started: float, outcome: str, result: Any = None) -> None:
    ledger = _LEDGER.get()
    if ledger is None:
        return
    usage = getattr(result, "usage", None) or Usage()
    stage = str(getattr(request, "purpose", "") or "unknown")
    ledger.add(CallEntry(stage=stage, started=started, ended=time.perf_counter(), outcome=outcome, usage=usage))


def ledgered(fn: Any) -> Any:
    """Records each call of a model's ``complete``/``stream`` (for models outside the gateway: fakes)."""
    import functools

    @functools.wraps(fn)
    async def wrapper(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        call_starting()
        try:
            result = await fn(self, request, *args, **kwargs)
        except asyncio.CancelledError:
            record_call(request, started, "cancelled")
            raise
        except Exception as exc:
            record_call(request, started, str(getattr(exc, "code", "error")))
            raise
        record_call(request, started, "ok", result)
        return result

    return wrapper
