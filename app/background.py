"""Background work of the app: a task that runs beside a block of code and is cancelled (and
awaited) when the block ends, and a pass repeated for the life of the process."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any


@contextlib.asynccontextmanager
async def running_beside(work: Coroutine[Any, Any, None], *, name: str | None = None) -> AsyncIterator[None]:
    """Run ``work`` while the body runs; when the body ends (or raises), cancel it and wait for it to stop."""
    task = asyncio.create_task(work, name=name)
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def every(seconds: float, one_pass: Callable[[], Awaitable[object]], *, log: logging.Logger, what: str) -> None:
    """Run ``one_pass`` now and then once every ``seconds``, until cancelled. A pass that raises
    is logged (debug: the database may be away for a moment) and the next one runs as planned."""
    while True:
        try:
            await one_pass()
        except Exception:  # noqa: BLE001 - look again at the next pass
            log.debug("%s pass failed", what, exc_info=True)
        await asyncio.sleep(seconds)
