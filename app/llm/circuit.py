"""A circuit breaker per model config: when a model keeps failing, fail fast instead of waiting.

Why: a hosted API that is down makes every call spend its whole retry budget (seconds of
backoff, a timeout) before the stage falls back; with the breaker open the stage gets
``ModelCircuitOpen`` (``model_unavailable``, retryable) at once and runs its fallback.

- **closed**: calls go through. A call that failed on a transient error (after its retries)
  counts; a call that got any answer from the server (a success, but also a 400 or a refusal)
  resets the count. ``failures`` failed calls in a row, within ``WINDOW_S`` of the first, open it.
- **open**: for the cool-down every call raises ``ModelCircuitOpen`` without a network call.
- **half_open**: the cool-down is over; the next call is let through as the one probe (a single
  attempt, no retries) while the others still fail fast. Its success closes the breaker; its
  failure opens it again for twice the cool-down, up to ``MAX_COOLDOWN_FACTOR`` times the base.

State is per process and per gateway; the clock is injectable (monotonic seconds) for tests.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable
from typing import Literal

from app.errors import ModelCircuitOpen
from app.llm.config import CircuitPolicy
from app.metrics import record_circuit_open, record_circuit_rejection

log = logging.getLogger("app.llm.circuit")

CircuitState = Literal["closed", "open", "half_open"]
WINDOW_S = 60.0  # failures further apart than this from the first of a streak start a new streak
MAX_COOLDOWN_FACTOR = 8  # 10 s doubles to at most 80 s while the probes keep failing


class CircuitBreaker:
    def __init__(
        self,
        config_id: str,
        policy: CircuitPolicy,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.config_id = config_id
        self.policy = policy
        self._clock = clock
        self._wall = wall_clock
        self._base_cooldown_s = policy.cooldown_ms / 1000
        self._cooldown_s = self._base_cooldown_s
        self._failures = 0
        self._streak_started: float | None = None
        self._open_until: float | None = None
        self._opened_after = 0
        self._probing = False

    @property
    def failures(self) -> int:
        """Transient failures in a row counted towards opening."""
        return self._failures

    @property
    def cooldown_s(self) -> float:
        return self._cooldown_s

    def state(self) -> CircuitState:
        if self._open_until is None:
            return "closed"
        return "open" if self._clock() < self._open_until else "half_open"

    def admit(self) -> bool:
        """Before a call: ``True`` if this call is the half-open probe, ``False`` for an ordinary
        call; raises ``ModelCircuitOpen`` (and counts the rejection) when it must fail fast."""
        state = self.state()
        if state == "closed":
            return False
        if state == "half_open" and not self._probing:
            self._probing = True
            log.info("model %s: circuit half-open, letting one probe call through", self.config_id)
            return True
        record_circuit_rejection(self.config_id)
        raise self._open_error()

    def succeeded(self, probe: bool = False) -> None:
        """The server answered (even with a non-transient error): the streak ends; a probe closes it."""
        if probe:
            self._probing = False
        self._failures = 0
        self._streak_started = None
        if self._open_until is not None:
            log.info("model %s: circuit closed (the server answered again)", self.config_id)
            self._open_until = None
            self._cooldown_s = self._base_cooldown_s
            record_circuit_open(self.config_id, False)

    def failed(self, reason: str, probe: bool = False) -> None:
        """A call ended on a transient error after its retries."""
        now = self._clock()
        if probe:
            self._probing = False
            self._failures += 1
            self._cooldown_s = min(self._cooldown_s * 2, self._base_cooldown_s * MAX_COOLDOWN_FACTOR)
            self._open(now, reason)
            return
        if self._open_until is not None:
            return  # a call that began before the breaker opened: it is open already
        if self._streak_started is None or now - self._streak_started > WINDOW_S:
            self._failures, self._streak_started = 0, now
        self._failures += 1
        if self.policy.failures and self._failures >= self.policy.failures:
            self._open(now, reason)

    def released(self, probe: bool = False) -> None:
        """A call ended without a verdict on the server (cancelled, or the consumer's own error)."""
        if probe:
            self._probing = False

    def _open(self, now: float, reason: str) -> None:
        self._opened_after = max(self._failures, 1)
        self._open_until = now + self._cooldown_s
        log.warning("model %s: circuit open for %.1fs after %d failed call(s) in a row (last: %s)",
                    self.config_id, self._cooldown_s, self._opened_after, reason)  # fmt: skip
        record_circuit_open(self.config_id, True)

    def _open_error(self) -> ModelCircuitOpen:
        assert self._open_until is not None
        left = max(0.0, self._open_until - self._clock())
        until = dt.datetime.fromtimestamp(self._wall() + left, dt.UTC).isoformat(timespec="seconds")
        return ModelCircuitOpen(self.config_id, retry_after_s=left, open_until=until,
                                failures=self._opened_after, probing=left == 0.0)  # fmt: skip
