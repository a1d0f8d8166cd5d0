"""Prometheus metrics for operators: ``GET /metrics`` in the text exposition format.

The format is written by ``prometheus_client`` (never by hand). Instrumentation points call the
small ``record_*`` functions below, which never raise: a metric must not break a turn.

``COMPANION_METRICS`` decides the endpoint: ``admin`` (default; needs an admin token), ``open``
(for a scraper inside a private network) or ``off`` (404). Counters are per process; with several
server processes, scrape each one (the usual Prometheus set-up).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from typing import Any

from litestar import Request, Response, get
from litestar.datastructures import State
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from app.errors import NotFound
from app.llm.ledger import call_starting, record_call

log = logging.getLogger("app.metrics")

REGISTRY = CollectorRegistry(auto_describe=True)
_IN_MODEL_CALL: contextvars.ContextVar[bool] = contextvars.ContextVar("companion_in_model_call", default=False)
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)

TURN_STAGE_SECONDS = Histogram(
    "companion_turn_stage_seconds", "Latency of one turn pipeline stage (total = the whole turn).",
    ["stage", "outcome"], buckets=_LATENCY_BUCKETS, registry=REGISTRY,
)  # fmt: skip
TURNS = Counter("companion_turns", "Turns finished, by status and error code.", ["status", "code"], registry=REGISTRY)
TURNS_RUNNING = Gauge("companion_turns_running", "Turns running in this process.", registry=REGISTRY)
MODEL_CALLS = Counter(
    "companion_model_calls", "Model calls by stage, model config and outcome (ok or an error code).",
    ["stage", "model_config", "outcome"], registry=REGISTRY,
)  # fmt: skip
MODEL_CALL_SECONDS = Histogram(
    "companion_model_call_seconds", "Latency of one model call.", ["stage", "model_config"],
    buckets=_LATENCY_BUCKETS, registry=REGISTRY,
)  # fmt: skip
MODEL_REPAIRS = Counter(
    "companion_model_repairs", "Structured-output repair attempts (a decode or check failed and was resent).",
    ["stage"], registry=REGISTRY,
)  # fmt: skip
MODEL_STRUCT_FAILURES = Counter(
    "companion_model_struct_failures", "Structured outputs still invalid after every repair.", ["stage"],
    registry=REGISTRY,
)  # fmt: skip
MODEL_RETRIES = Counter(
    "companion_model_call_retries", "Model call attempts retried after a transient error, by reason "
    "(429, 408, 5xx, timeout, connection, stream_cut, stream_error, empty_stream).",
    ["model_config", "reason"], registry=REGISTRY,
)  # fmt: skip
MODEL_RETRY_WAIT = Counter(
    "companion_model_call_retry_wait_seconds", "Seconds spent waiting before model call retries.",
    ["model_config"], registry=REGISTRY,
)  # fmt: skip
MODEL_CIRCUIT_OPEN = Gauge(
    "companion_model_circuit_open", "1 while a model config's circuit breaker is open or half-open, else 0.",
    ["model_config"], registry=REGISTRY,
)  # fmt: skip
MODEL_CIRCUIT_REJECTIONS = Counter(
    "companion_model_circuit_rejections", "Model calls failed fast by an open circuit breaker (no network call).",
    ["model_config"], registry=REGISTRY,
)  # fmt: skip
STAGE_FALLBACKS = Counter(
    "companion_stage_outcomes", "Turn stage outcomes (ok | fallback | error | skipped) per stage.",
    ["stage", "outcome"], registry=REGISTRY,
)  # fmt: skip
SUGGESTIONS = Counter("companion_suggestions", "Suggestion records by final status.", ["status"], registry=REGISTRY)
STORY = Counter("companion_story_outcomes", "Story coordinator outcomes per turn reply.", ["outcome"], registry=REGISTRY)
HTTP_REQUESTS = Counter(
    "companion_http_requests", "HTTP requests by method, route template and status.", ["method", "route", "status"],
    registry=REGISTRY,
)  # fmt: skip
HTTP_SECONDS = Histogram(
    "companion_http_request_seconds", "HTTP request latency by route template.", ["method", "route"],
    buckets=_LATENCY_BUCKETS, registry=REGISTRY,
)  # fmt: skip


def _safe(fn: Any) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except Exception:  # noqa: BLE001 - metrics never break the caller
            log.debug("metric %s failed", fn.__name__, exc_info=True)

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


@_safe
def record_model_call(stage: str, model_config: str, seconds: float, outcome: str = "ok") -> None:
    MODEL_CALLS.labels(stage or "unknown", model_config or "unknown", outcome).inc()
    MODEL_CALL_SECONDS.labels(stage or "unknown", model_config or "unknown").observe(max(0.0, seconds))


@_safe
def record_model_retry(model_config: str, reason: str, wait_s: float) -> None:
    MODEL_RETRIES.labels(model_config or "unknown", reason or "unknown").inc()
    MODEL_RETRY_WAIT.labels(model_config or "unknown").inc(max(0.0, wait_s))


@_safe
def record_circuit_open(model_config: str, is_open: bool) -> None:
    MODEL_CIRCUIT_OPEN.labels(model_config or "unknown").set(1 if is_open else 0)


@_safe
def record_circuit_rejection(model_config: str) -> None:
    MODEL_CIRCUIT_REJECTIONS.labels(model_config or "unknown").inc()


@_safe
def record_repair(stage: str) -> None:
    MODEL_REPAIRS.labels(stage or "unknown").inc()


@_safe
def record_struct_failure(stage: str) -> None:
    MODEL_STRUCT_FAILURES.labels(stage or "unknown").inc()


@_safe
def record_stage(stage: str, ms: float, outcome: str = "ok") -> None:
    TURN_STAGE_SECONDS.labels(stage, outcome).observe(max(0.0, ms) / 1000)
    STAGE_FALLBACKS.labels(stage, outcome).inc()


@_safe
def record_turn(status: str, error: dict[str, Any] | None) -> None:
    TURNS.labels(status, str((error or {}).get("code") or "none")).inc()


@_safe
def record_suggestion(status: str) -> None:
    SUGGESTIONS.labels(status).inc()


@_safe
def record_story(outcome: str) -> None:
    STORY.labels(outcome).inc()


def record_stage_row(row: dict[str, Any]) -> None:
    """One ``turn_stage_metrics`` row as it is written: stage latency and outcome; the ``story``
    and ``auto_reply`` stages also count as Story and suggestion outcomes."""
    stage, outcome = str(row.get("stage", "unknown")), str(row.get("outcome", "ok"))
    record_stage(stage, float(row.get("ms") or 0.0), outcome)
    if stage == "story":
        record_story(outcome)
    elif stage == "auto_reply":
        record_suggestion(outcome)


class running_turn:
    """``with running_turn():`` counts a turn running in this process."""

    def __enter__(self) -> None:
        TURNS_RUNNING.inc()

    def __exit__(self, *_: Any) -> None:
        TURNS_RUNNING.dec()


def _route_of(scope: Scope) -> str:
    handler = scope.get("route_handler")
    template = scope.get("path_template")
    if isinstance(template, str) and template:
        return template
    paths = getattr(handler, "paths", None)
    return sorted(paths)[0] if paths else "unmatched"


def http_metrics_middleware(app: ASGIApp) -> ASGIApp:
    """Counts every HTTP request by method, route template (never the raw path) and status."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await app(scope, receive, send_wrapper)
        finally:
            route = _route_of(scope)
            method = scope.get("method", "GET")
            try:
                HTTP_REQUESTS.labels(method, route, str(status)).inc()
                HTTP_SECONDS.labels(method, route).observe(time.perf_counter() - started)
            except Exception:  # noqa: BLE001
                log.debug("http metric failed", exc_info=True)

    return middleware


@get("/metrics", tags=["operations"], include_in_schema=True, media_type=CONTENT_TYPE_LATEST)
async def metrics_endpoint(request: Request, state: State) -> Response[bytes]:
    """Prometheus metrics (text format). ``COMPANION_METRICS``: off | admin (default) | open."""
    mode = state.settings.metrics
    if mode == "off":
        raise NotFound("metrics are off (COMPANION_METRICS=off)", code="metrics_disabled")
    if mode == "admin":
        from app.auth.tokens import principal_from_header

        principal_from_header(state.settings.jwt_secret, request.headers.get("authorization")).require_admin()
    return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)


def observed_model_call(fn: Any) -> Any:
    """Decorates a model gateway's ``complete``/``stream``: one call counted per stage, model
    config and outcome (``ok`` or the error's code), with its latency."""
    import functools

    @functools.wraps(fn)
    async def wrapper(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        if _IN_MODEL_CALL.get():  # e.g. ``stream`` falling back to ``complete``: one call, counted once
            return await fn(self, request, *args, **kwargs)
        token = _IN_MODEL_CALL.set(True)
        try:
            return await _observed(self, request, *args, **kwargs)
        finally:
            _IN_MODEL_CALL.reset(token)

    async def _observed(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        call_starting()
        stage = str(getattr(request, "purpose", "") or "unknown")
        try:
            config_id = str(self.config_for(request).id)
        except Exception:  # noqa: BLE001 - e.g. not configured: the call itself raises and is counted
            config_id = "none"
        try:
            result = await fn(self, request, *args, **kwargs)
        except asyncio.CancelledError:
            record_call(request, started, "cancelled")
            raise
        except Exception as exc:
            record_model_call(stage, config_id, time.perf_counter() - started, str(getattr(exc, "code", "error")))
            record_call(request, started, str(getattr(exc, "code", "error")))
            raise
        record_model_call(stage, config_id, time.perf_counter() - started, "ok")
        record_call(request, started, "ok", result)
        return result

    return wrapper
