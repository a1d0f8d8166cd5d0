"""A task that runs beside a block of code and is cancelled (and awaited) when the block ends."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine
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
