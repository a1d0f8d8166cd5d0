"""Model fakes for tests, and the guard that keeps tests off real model endpoints.

``ScriptedModel`` replays responses queued per purpose and records every request (``history``),
so a test states exactly what the model "said". ``FunctionModel`` lets a callable look at the
request and answer, e.g. wrong first and right on the repair. Both report estimated usage, as a
provider without usage would. Both stream: ``stream(request, on_delta)`` hands the answer out in a
few deltas, and a ``Streamed(...)`` answer scripts the exact pieces, their pace and a failure
mid-stream (``complete`` gets the joined text, or the error). ``block_network_models`` patches the ``openai`` client so a call to
anything but loopback (where the simulator runs) fails loudly instead of spending money.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from app.llm.ledger import ledgered
from app.llm.port import ModelResult, OnDelta
from app.llm.streaming import emit_pieces
from app.llm.structured import Structured
from app.llm.usage import estimate_usage

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


class NothingQueued(AssertionError):
    """A test asked the scripted model for a purpose it did not script."""


class NetworkModelCallBlocked(RuntimeError):
    """A test tried to reach a real model endpoint."""


class Streamed:
    """A scripted streamed answer: these ``pieces`` as deltas, ``delay_s`` before each one, then
    ``error`` raised (a model failing mid-stream) or the joined text returned.

    ``finish_reason`` lets a test script a cut-off answer (``"length"``).
    """

    def __init__(self, *pieces: str, error: BaseException | None = None, delay_s: float = 0.0,
                 finish_reason: str = "stop") -> None:
        self.pieces = [p for p in pieces if p]
        self.error = error
        self.delay_s = delay_s
        self.finish_reason = finish_reason

    @property
    def text(self) -> str:
        return "".join(self.pieces)


def _to_result(response: Any, request: Any, model_name: str) -> ModelResult:
    if isinstance(response, Streamed):
        if response.error is not None:
            raise response.error
        result = _to_result(response.text, request, model_name)
        return msgspec.structs.replace(result, finish_reason=response.finish_reason)
    if isinstance(response, BaseException) or (isinstance(response, type) and issubclass(response, BaseException)):
        raise response
    if isinstance(response, ModelResult):
        return response
    if isinstance(response, str):
        text = response
    elif isinstance(response, (dict, list, msgspec.Struct)):
        text = msgspec.json.encode(response).decode()
    else:
        raise TypeError(f"a fake model response must be str, dict, Struct, ModelResult or exception, not {type(response).__name__}")
    usage = estimate_usage((m.content for m in request.messages), text)
    return ModelResult(text=text, usage=usage, model=model_name, finish_reason="stop")


async def _stream(response: Any, request: Any, model_name: str, on_delta: OnDelta, started: float) -> ModelResult:
    """Deliver one scripted answer as deltas; ``started`` is when the request came in."""
    if not isinstance(response, Streamed):
        result = _to_result(response, request, model_name)
        if not result.text:
            return result
        first_ms = round((time.perf_counter() - started) * 1000, 3)
        await emit_pieces(result.text, on_delta)
        return msgspec.structs.replace(result, first_token_ms=first_ms)
    first_ms = None
    for piece in response.pieces:
        await asyncio.sleep(response.delay_s)
        if first_ms is None:
            first_ms = round((time.perf_counter() - started) * 1000, 3)
        await on_delta(piece)
    if response.error is not None:
        raise response.error
    return msgspec.structs.replace(_to_result(response, request, model_name), first_token_ms=first_ms)


class ScriptedModel(Structured):
    """``enqueue(purpose, *responses)``; a purpose without its own queue uses its stage's queue."""

    def __init__(self, model_name: str = "scripted-fake") -> None:
        self.model_name = model_name
        self.history: list[Any] = []
        self._queues: dict[str, deque[Any]] = {}

    def enqueue(self, purpose: str, *responses: Any) -> ScriptedModel:
        self._queues.setdefault(purpose, deque()).extend(responses)
        return self

    def remaining(self, purpose: str | None = None) -> int:
        if purpose is not None:
            return len(self._queues.get(purpose, ()))
        return sum(len(q) for q in self._queues.values())

    def is_configured(self, stage: str) -> bool:
        return True

    @ledgered
    async def complete(self, request: Any) -> ModelResult:
        return _to_result(self._next(request), request, self.model_name)

    @ledgered
    async def stream(self, request: Any, on_delta: OnDelta) -> ModelResult:
        started = time.perf_counter()
        return await _stream(self._next(request), request, self.model_name, on_delta, started)

    def _next(self, request: Any) -> Any:
        self.history.append(request)
        purpose = request.purpose
        for key in (purpose, purpose.split(".")[0]):
            queue = self._queues.get(key)
            if queue:
                return queue.popleft()
        queued = {k: len(v) for k, v in self._queues.items() if v}
        raise NothingQueued(f"ScriptedModel has no response queued for purpose {purpose!r} (queued: {queued or 'nothing'})")


class FunctionModel(Structured):
    """Calls ``fn(request)`` (sync or async) → str | dict | Struct | ModelResult | Streamed, or raises."""

    def __init__(self, fn: Callable[[Any], Any], model_name: str = "function-fake") -> None:
        self.fn = fn
        self.model_name = model_name
        self.history: list[Any] = []

    def is_configured(self, stage: str) -> bool:
        return True

    @ledgered
    async def complete(self, request: Any) -> ModelResult:
        return _to_result(await self._answer(request), request, self.model_name)

    @ledgered
    async def stream(self, request: Any, on_delta: OnDelta) -> ModelResult:
        started = time.perf_counter()
        return await _stream(await self._answer(request), request, self.model_name, on_delta, started)

    async def _answer(self, request: Any) -> Any:
        self.history.append(request)
        response = self.fn(request)
        if inspect.isawaitable(response):
            response = await response
        return response


@contextlib.contextmanager
def block_network_models(allow_hosts: frozenset[str] = LOOPBACK_HOSTS) -> Iterator[None]:
    """Make every ``openai`` client request to a non-loopback host raise ``NetworkModelCallBlocked``.

    Patches ``request`` on the sync and async base clients (every API call goes through it), so
    the check sees the client's ``base_url`` before any socket is opened. Nesting is fine.
    """
    from openai import _base_client as base

    originals = {cls: cls.request for cls in (base.AsyncAPIClient, base.SyncAPIClient)}

    def check(client: Any) -> None:
        host = client.base_url.host
        if host not in allow_hosts:
            raise NetworkModelCallBlocked(
                f"tests may not call real model endpoints (tried {client.base_url}); "
                "use ScriptedModel/FunctionModel or the simulator on 127.0.0.1"
            )

    async def async_request(self: Any, *args: Any, **kwargs: Any) -> Any:
        check(self)
        return await originals[base.AsyncAPIClient](self, *args, **kwargs)

    def sync_request(self: Any, *args: Any, **kwargs: Any) -> Any:
        check(self)
        return originals[base.SyncAPIClient](self, *args, **kwargs)

    base.AsyncAPIClient.request = async_request  # type: ignore[method-assign]
    base.SyncAPIClient.request = sync_request  # type: ignore[method-assign]
    try:
        yield
    finally:
        for cls, original in originals.items():
            cls.request = original  # type: ignore[method-assign]


def conftest_llm_guard() -> Iterator[None]:
    """Body for an autouse fixture in the root conftest::

        @pytest.fixture(autouse=True)
        def _no_real_models():
            yield from conftest_llm_guard()
    """
    with block_network_models():
        yield
