"""Streaming without a streaming API: a finished text handed to ``on_delta`` in a few pieces.

Fakes, wrappers and a model config with ``stream = false`` all answer ``stream(request, on_delta)``
this way, so a caller codes against one interface and its tests see several deltas, as on the
wire. The pieces always join back into the exact text.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from app.llm.port import ModelResult, OnDelta

DEFAULT_PIECES = 4


def split_pieces(text: str, pieces: int = DEFAULT_PIECES) -> list[str]:
    """``text`` in at most ``pieces`` non-empty slices of about equal length (none for ``""``)."""
    if not text:
        return []
    count = max(1, min(pieces, len(text)))
    size, extra = divmod(len(text), count)
    out, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        out.append(text[start:end])
        start = end
    return out


async def emit_pieces(text: str, on_delta: OnDelta, *, pieces: int = DEFAULT_PIECES, delay_s: float = 0.0) -> None:
    """Send ``text`` as a few deltas, yielding to the event loop (or sleeping ``delay_s``) in between."""
    for i, piece in enumerate(split_pieces(text, pieces)):
        if i:
            await asyncio.sleep(delay_s)
        await on_delta(piece)


async def stream_by_complete(
    complete: Callable[[Any], Awaitable[ModelResult]], request: Any, on_delta: OnDelta, *, pieces: int = DEFAULT_PIECES
) -> ModelResult:
    """``complete(request)``, then its text as ``pieces`` deltas; ``first_token_ms`` is when the
    first piece went out (the whole call's latency, as for a model that cannot stream)."""
    started = time.perf_counter()
    result = await complete(request)
    if not result.text:
        return result
    first_ms = round((time.perf_counter() - started) * 1000, 3)
    await emit_pieces(result.text, on_delta, pieces=pieces)
    return msgspec.structs.replace(result, first_token_ms=first_ms) if isinstance(result, ModelResult) else result
