"""Model-backed stages with their offline fallbacks. Each returns a ``StageRun`` that says what
happened (``llm`` | ``fallback`` | ``skipped``), why, how long it took and what it cost — nothing
is silently dropped."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import msgspec

from app.errors import AppError, InvalidModelOutput
from app.llm.port import Usage
from app.llm.schema import Constraints
from app.llm.structured import structured

T = TypeVar("T")
STRUCT_REPAIRS = 1


class StageRun(msgspec.Struct, Generic[T], kw_only=True):
    stage: str
    value: T
    source: str  # llm | fallback | skipped | offline (the offline reading by choice: settings.emotionSource)
    ms: float
    usage: Usage = Usage()
    error: dict[str, Any] | None = None
    attempts: int = 0
    via: str | None = None  # "combined": answered by the one combined call (app/turns/combined.py)

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "ms": round(self.ms, 3), "attempts": self.attempts}
        if self.via:
            out["via"] = self.via
        if self.error:
            out["error"] = self.error
        return out


def model_configured(model: Any, stage: str) -> bool:
    check = getattr(model, "is_configured", None)
    return True if check is None else bool(check(stage))


def error_record(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, AppError):
        record: dict[str, Any] = {"code": exc.code, "message": exc.message[:500]}
        if isinstance(exc, InvalidModelOutput):
            record["problems"] = exc.problems[-3:]
        return record
    return {"code": "internal_error", "message": f"{type(exc).__name__}: {exc}"[:500]}  # codes are public names only


async def struct_stage(
    stage: str,
    model: Any,
    request: Any,
    struct_type: type[T],
    fallback: Callable[[], T],
    *,
    validate: Callable[[T], list[str]] | None = None,
    post: Callable[[T], Any] | None = None,
    constraints: Constraints | None = None,
) -> StageRun[Any]:
    """Ask the model for ``struct_type`` (with one repair); on any model failure use ``fallback``."""
    started = time.perf_counter()
    if not model_configured(model, stage):
        return StageRun(stage=stage, value=fallback(), source="fallback", ms=_ms(started),
                        error={"code": "model_not_configured", "message": f"no model for stage {stage}"})  # fmt: skip
    try:
        outcome = await structured(model).complete_struct(
            request, struct_type, constraints=constraints, repairs=STRUCT_REPAIRS, validate=validate
        )
    except AppError as exc:
        usage = getattr(exc, "usage", Usage())
        attempts = len(getattr(exc, "diagnostics", []) or [])
        return StageRun(stage=stage, value=fallback(), source="fallback", ms=_ms(started), usage=usage,
                        error=error_record(exc), attempts=attempts)  # fmt: skip
    value = post(outcome.value) if post else outcome.value
    return StageRun(stage=stage, value=value, source="llm", ms=_ms(started), usage=outcome.usage,
                    attempts=len(outcome.attempts))  # fmt: skip


async def timed(stage: str, fn: Callable[[], Awaitable[T]]) -> StageRun[T]:
    started = time.perf_counter()
    value = await fn()
    return StageRun(stage=stage, value=value, source="llm", ms=_ms(started))


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
