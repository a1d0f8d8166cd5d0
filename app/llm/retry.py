"""Retries of transient model errors, within the call's deadline, behind a circuit breaker.

A 429 or a 500 from a hosted API is routine; a turn should not lose a reply to one. Each call
the gateway makes runs through ``Retrier.run``:

- **What is retried**: errors that say "try again" (``ModelUnavailable`` with ``retryable``:
  connection errors, 408, 429, 5xx, a stream cut before its finish reason, an error event in a
  stream) and an empty streamed answer. Never a 400/401/403/404, a context overflow, a refusal
  or invalid output from a 200 (the repair loop in ``app.llm.structured`` handles those).
- **Streams**: retried only while nothing has reached ``on_delta`` (``can_retry``). A draft the
  user may have seen is not silently replaced; the caller discards it as before.
- **Waits**: full-jitter exponential backoff (``uniform(0, min(max, base * 2**n))``), or the
  server's ``Retry-After`` / ``retry-after-ms`` when that is longer. A ``Retry-After`` beyond
  ``max_delay_ms`` ends the retries (retrying sooner would ignore what the server asked).
- **Deadline**: the call's whole budget is its timeout (request ``timeout_s``, else the
  model config's ``timeoutMs``), shared by all its attempts and waits; a caller's own deadline
  (``model_deadline`` below, or an ``asyncio.timeout`` around the call in the same task) also
  counts. A retry starts only if, after its wait, the time left is at least the expected length
  of an attempt (1.5 x the recent successful attempts of that model config and kind; 10 % of
  the timeout before any succeeded). So the total stays within the timeout a single attempt had.
- **Breaker**: see ``app.llm.circuit``; a call counts once, after its retries.

Randomness, sleep and clock are injected, so tests are deterministic and instant.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import email.utils
import math
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, TypeVar

from app.errors import AppError, ModelCircuitOpen, ModelTimeout, ModelUnavailable
from app.llm.circuit import CircuitBreaker, CircuitState
from app.llm.config import ModelConfig, RetryPolicy
from app.metrics import record_model_retry

T = TypeVar("T")
MIN_ATTEMPT_S = 0.05
FIRST_ATTEMPT_SHARE = 0.1  # before any success, a retry needs 10 % of the timeout left
EXPECTED_MARGIN = 1.5
_EWMA_ALPHA = 0.3
_CALLER_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("model_call_deadline", default=None)


class RetryableAnswer(Exception):
    """An answer worth another try (an empty stream). When no retry is left, ``result`` is returned."""

    def __init__(self, result: Any, reason: str) -> None:
        super().__init__(reason)
        self.result = result
        self.reason = reason


def transient_reason(exc: BaseException) -> str | None:
    """The metric label of a transient failure, or ``None`` when retrying cannot help."""
    if isinstance(exc, RetryableAnswer):
        return exc.reason
    if isinstance(exc, ModelCircuitOpen) or not isinstance(exc, ModelUnavailable) or not exc.retryable:
        return None
    details = exc.details or {}
    status = details.get("status")
    if isinstance(status, int):
        return str(status) if status in (408, 429) else "5xx"
    if details.get("transient"):
        return str(details["transient"])
    return "timeout" if isinstance(exc, ModelTimeout) else "connection"


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date); ``None`` if absent."""
    if not headers:
        return None
    for name, divisor in (("retry-after-ms", 1000), ("retry-after", 1)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            if name == "retry-after-ms":
                continue
            parsed = email.utils.parsedate_tz(value)
            if parsed is None:
                continue
            seconds = email.utils.mktime_tz(parsed) - (time.time() if now is None else now)
        if math.isfinite(seconds):
            return max(0.0, seconds)
    return None


def backoff_s(policy: RetryPolicy, retry: int, rng: random.Random) -> float:
    """Full jitter: uniformly between 0 and ``base * 2**(retry-1)``, capped at ``max_delay_ms``."""
    ceiling = min(policy.max_delay_ms, policy.base_delay_ms * 2 ** min(retry - 1, 30)) / 1000
    return rng.uniform(0.0, ceiling)


@contextlib.asynccontextmanager
async def model_deadline(seconds: float) -> AsyncIterator[None]:
    """``asyncio.timeout(seconds)`` that model calls inside it can see (also from tasks started in
    it): their retries never wait past it. Nested deadlines keep the earliest."""
    loop = asyncio.get_running_loop()
    at = loop.time() + seconds
    outer = _CALLER_DEADLINE.get()
    token = _CALLER_DEADLINE.set(at if outer is None else min(outer, at))
    try:
        async with asyncio.timeout_at(at):
            yield
    finally:
        _CALLER_DEADLINE.reset(token)


def caller_remaining_s() -> float | None:
    """Seconds left under the caller's deadlines: ``model_deadline`` and, best effort (CPython's
    asyncio), any ``asyncio.timeout`` the current task is running under. ``None``: no deadline."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    now = loop.time()
    at = _CALLER_DEADLINE.get()
    task = asyncio.current_task()
    for handle in getattr(loop, "_scheduled", ()):  # the timer of every pending asyncio.timeout
        owner = getattr(getattr(handle, "_callback", None), "__self__", None)
        if isinstance(owner, asyncio.Timeout) and getattr(owner, "_task", None) is task and not handle.cancelled():
            at = handle.when() if at is None else min(at, handle.when())
    return None if at is None else at - now


class ExpectedDuration:
    """How long a successful attempt of one model config and kind takes (moving average)."""

    def __init__(self) -> None:
        self.mean_s: float | None = None

    def observe(self, seconds: float) -> None:
        seconds = max(0.0, seconds)
        self.mean_s = seconds if self.mean_s is None else (1 - _EWMA_ALPHA) * self.mean_s + _EWMA_ALPHA * seconds

    def needed_s(self, timeout_s: float) -> float:
        """The time a retry must have left to be worth starting."""
        guess = timeout_s * FIRST_ATTEMPT_SHARE if self.mean_s is None else self.mean_s * EXPECTED_MARGIN
        return min(timeout_s, max(MIN_ATTEMPT_S, guess))


class Retrier:
    """Retries, waits and circuit breakers for one gateway (one breaker per model config id)."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rng: random.Random | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._wall = wall_clock
        self._breakers: dict[str, CircuitBreaker] = {}
        self._expected: dict[tuple[str, str], ExpectedDuration] = {}

    def breaker(self, config: ModelConfig) -> CircuitBreaker:
        breaker = self._breakers.get(config.id)
        if breaker is None:
            breaker = self._breakers[config.id] = CircuitBreaker(
                config.id, config.circuit, clock=self._clock, wall_clock=self._wall
            )
        return breaker

    def state(self, config_id: str) -> CircuitState:
        breaker = self._breakers.get(config_id)
        return "closed" if breaker is None else breaker.state()

    async def run(
        self,
        config: ModelConfig,
        timeout_s: float,
        attempt: Callable[[float, int], Awaitable[T]],
        *,
        kind: str = "complete",
        can_retry: Callable[[], bool] | None = None,
    ) -> tuple[T, int]:
        """``attempt(seconds_left, number)`` until it succeeds or retrying cannot help; returns
        (result, retries). The last error is raised with ``details.attempts`` and ``retryStopped``."""
        breaker = self.breaker(config)
        probe = breaker.admit()
        expected = self._expected.setdefault((config.id, kind), ExpectedDuration())
        deadline = self._clock() + timeout_s
        number = 0
        verdict = False
        try:
            while True:
                number += 1
                started = self._clock()
                try:
                    result = await attempt(timeout_s if number == 1 else deadline - started, number)
                except Exception as exc:
                    reason = transient_reason(exc)
                    if reason is None:
                        verdict = isinstance(exc, AppError) and not isinstance(exc, ModelCircuitOpen)
                        if verdict:  # the server answered: it is up, whatever it said
                            breaker.succeeded(probe)
                        raise
                    wait, stopped = self._wait(config.retry, number, exc, deadline, expected.needed_s(timeout_s),
                                               probe=probe, breaker=breaker, can_retry=can_retry)  # fmt: skip
                    if wait is None:
                        verdict = True
                        if isinstance(exc, RetryableAnswer):
                            breaker.succeeded(probe)
                            return exc.result, number - 1
                        breaker.failed(reason, probe)
                        _annotate(exc, number, stopped)
                        raise
                    record_model_retry(config.id, reason, wait)
                    if wait > 0:
                        await self._sleep(wait)
                    continue
                expected.observe(self._clock() - started)
                verdict = True
                breaker.succeeded(probe)
                return result, number - 1
        finally:
            if not verdict:  # cancelled, or a failure that says nothing about the server
                breaker.released(probe)

    def _wait(
        self, policy: RetryPolicy, number: int, exc: Exception, deadline: float, needed_s: float, *,
        probe: bool, breaker: CircuitBreaker, can_retry: Callable[[], bool] | None,
    ) -> tuple[float | None, str]:  # fmt: skip
        """(seconds to wait before attempt ``number + 1``, or None and why there is none)."""
        if number >= policy.max_attempts:
            return None, "max_attempts"
        if can_retry is not None and not can_retry():
            return None, "deltas_sent"
        if probe:
            return None, "half_open_probe"
        if breaker.state() != "closed":
            return None, "circuit_open"
        retry_after = getattr(exc, "retry_after_s", None)
        if retry_after is not None and retry_after > policy.max_delay_ms / 1000:
            return None, "retry_after_too_long"
        floor = retry_after or 0.0
        left = deadline - self._clock()
        caller = caller_remaining_s()
        if caller is not None:
            left = min(left, caller)
        room = left - needed_s
        if room <= 0 or room < floor:
            return None, "deadline"
        return min(max(backoff_s(policy, number, self._rng), floor), room), ""


def _annotate(exc: Exception, attempts: int, stopped: str) -> None:
    """Say on the raised error how many attempts it took and why they stopped."""
    if not isinstance(exc, AppError):
        return
    exc.details = {**(exc.details or {}), "attempts": attempts, "retryStopped": stopped}
    if attempts > 1:
        exc.message = f"{exc.message} (after {attempts} attempts)"
        exc.args = (exc.message,)
