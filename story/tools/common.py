"""Shapes shared by all six Story tools: call context, model config, diagnostics, usage, hooks.

Every tool returns its diagnostics and usage instead of logging them, so the host decides what
to record in a message's metadata; nothing is silently dropped.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Generic, Protocol, TypeVar

import msgspec

from story.ports import StructuredModel


class Cancellation(Protocol):
    def is_set(self) -> bool: ...


class StoryContext(msgspec.Struct, frozen=True):
    """Per-call identity. ``turn_id`` must stay the same when the same turn is resumed."""

    request_id: str
    turn_id: str
    language: str = "en"
    cancellation: Any = None  # anything with ``is_set()`` (asyncio.Event, threading.Event)
    trace: dict[str, Any] = {}

    def check_cancelled(self) -> None:
        if self.cancellation is not None and self.cancellation.is_set():
            raise asyncio.CancelledError(f"story call {self.request_id} cancelled")


@dataclass(frozen=True)
class StoryModelConfig:
    """The model a tool may call; credentials and routing stay with the host.

    ``is_recoverable_model_error(exc)`` is the host's classification of the exceptions its model
    raises (the seed's ``isRecoverableModelError``). True: the failure is recorded in the tool's
    diagnostics (``model_failed``) and the tool applies its failure policy, which keeps the
    evidence for a retry of the same turn (prepare defaults to ``normal``, advance is ``pending``,
    plan keeps ``need_plan``, settle is ``unknown``, rebranch ``failed``). False: the exception is
    raised out of ``execute`` unchanged, for errors no retry can cure (a wrong key, an unknown
    model, a bug). Without it every model exception is recoverable. It is not asked about
    cancellation (always raised), the tool's own ``timeout_s`` running out (always recoverable,
    ``model_timeout``) or an answer still invalid after the one repair (``repair_exhausted``,
    the tool's own validation, always recoverable).
    """

    model: StructuredModel
    model_config_id: str | None = None
    timeout_s: float | None = 45.0
    is_recoverable_model_error: Callable[[BaseException], bool] | None = None


class Diagnostic(msgspec.Struct, frozen=True):
    code: str
    message: str = ""
    data: dict[str, Any] = {}


class Usage(msgspec.Struct, frozen=True):
    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False
    calls: int = 0

    def plus(self, other: "Usage") -> "Usage":
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.estimated or other.estimated,
            self.calls + other.calls,
        )


class StoryError(Exception):
    """Base of the library's own errors; each carries its data."""


class PendingTurnUnresolved(StoryError):
    def __init__(self, pending_turn_id: str, turn_id: str) -> None:
        self.pending_turn_id, self.turn_id = pending_turn_id, turn_id
        super().__init__(f"turn {turn_id!r} cannot prepare on unresolved pending turn {pending_turn_id!r}")


class InvalidToolInput(StoryError):
    def __init__(self, tool: str, reason: str) -> None:
        self.tool, self.reason = tool, reason
        super().__init__(f"{tool}: {reason}")


I = TypeVar("I")
R = TypeVar("R")


@dataclass
class ToolHooks(Generic[I, R]):
    """Lifecycle hooks. ``after_turn`` runs only when the host calls ``tool.after_turn``."""

    before_execute: Callable[[I], Awaitable[I | None]] | None = None
    after_execute: Callable[[I, R], Awaitable[R | None]] | None = None
    after_turn: Callable[[list[R]], Awaitable[None]] | None = None


class StoryTool(Generic[I, R]):
    """Base: hooks around ``_run``; subclasses are pure except for their model calls."""

    name = "story_tool"

    def __init__(self, hooks: ToolHooks | None = None) -> None:
        self.hooks = hooks or ToolHooks()

    async def execute(self, input: I) -> R:
        ctx: StoryContext = input.context  # type: ignore[attr-defined]
        ctx.check_cancelled()
        if self.hooks.before_execute is not None:
            changed = await self.hooks.before_execute(input)
            input = changed if changed is not None else input
        result = await self._run(input)
        if self.hooks.after_execute is not None:
            changed_result = await self.hooks.after_execute(input, result)
            result = changed_result if changed_result is not None else result
        return result

    async def after_turn(self, results: list[R]) -> None:
        if self.hooks.after_turn is not None:
            await self.hooks.after_turn(results)

    async def _run(self, input: I) -> R:  # pragma: no cover - abstract
        raise NotImplementedError
