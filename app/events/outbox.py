"""The order a turn's own SSE response sends its events in.

A durable event goes out with its log id (``id:``, for ``Last-Event-ID``), so it waits for its
write; events go out in emit order, except that a ``message.delta`` (no id, never written alone)
does not queue behind durable events still being written. In a turn with a named agent the
understanding stages end just as the reply's first words arrive, and the first delta waited for
the ``turn.emotion`` and ``turn.selection`` writes: a few milliseconds to tens on a busy
database, on the user's time to the first words. Deltas keep their order among themselves (a
draft's text is in order), and none goes out before the first event (``turn.started``: the
client learns the turn and its user message first).
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator
from typing import Any

DELTA = "message.delta"

Item = tuple[str, dict[str, Any], "asyncio.Future[int | None]"]


class Outbox:
    """Filled by ``put`` (the turn's emit), drained by ``drain`` (the SSE generator); ``end`` after the last event."""

    def __init__(self) -> None:
        self._items: collections.deque[Item] = collections.deque()
        self._changed = asyncio.Event()
        self._ended = False
        self._first_sent = False

    def put(self, event: str, data: dict[str, Any], logged: asyncio.Future[int | None]) -> None:
        self._items.append((event, data, logged))
        self._changed.set()

    def end(self) -> None:
        self._ended = True
        self._changed.set()

    def _ready(self) -> list[tuple[str, dict[str, Any], int | None]]:
        """Take what may go out now: the head while it is written (or a delta), then, once the
        first event went out, the deltas behind a durable event still being written."""
        out: list[tuple[str, dict[str, Any], int | None]] = []
        while self._items and (self._items[0][0] == DELTA or self._items[0][2].done()):
            event, data, logged = self._items.popleft()
            out.append((event, data, logged.result() if event != DELTA else None))
            self._first_sent = True
        if self._items and self._first_sent:
            waiting = [item for item in self._items if item[0] != DELTA]
            out += [(event, data, None) for event, data, _ in self._items if event == DELTA]
            self._items = collections.deque(waiting)
        return out

    async def drain(self) -> AsyncIterator[tuple[str, dict[str, Any], int | None]]:
        """``(event, data, log id or None)`` in the order above, until ``end`` and all is sent."""
        while True:
            self._changed.clear()
            for ready in self._ready():
                yield ready
            if not self._items:
                if self._ended:
                    return
                await self._changed.wait()
                continue
            changed = asyncio.ensure_future(self._changed.wait())
            try:  # the head's write done, or a new event (a delta may go out at once)
                await asyncio.wait({self._items[0][2], changed}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()
