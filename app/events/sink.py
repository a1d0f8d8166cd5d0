"""``TurnEventSink``: the one place a turn's events go (the SSE response of the POST, the log and
live followers).

Durable events are written in emit order and get their id; events emitted while a write is in
flight go into the next write together, and ``emit_nowait`` lets the turn go on without waiting. ``message.delta`` events are not written one
by one: consecutive deltas of a draft are joined in memory and written as one ``message.delta``
row (joined text, offset of the first piece) at most every ``flush_every_s``, and always before the
next durable event of the turn, so the log keeps the emit order. Followers in this process see
every delta at once (without an id); other processes see the coalesced rows.

Durable events whose id nobody waits for (``emit_nowait``: a JSON turn) linger up to
``linger_s`` (0.1 s) before they are written, so a burst of them is one transaction, not one
each: a turn on a fast model wrote five or six. Followers see them at most that much later.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.events.hub import EventHub

logger = logging.getLogger("app.events")

DELTA = "message.delta"
TERMINAL = ("turn.completed", "turn.failed", "turn.cancelled")
# After a terminal event with ``"more": true`` the turn's late parts (suggestions) follow; this
# event, logged once they are done, is then the turn's last.
CLOSED = "turn.closed"
FLUSH_EVERY_S = 0.25
LINGER_S = 0.1


class _Draft:
    __slots__ = ("data", "end", "pieces", "start")

    def __init__(self, data: dict[str, Any], start: int) -> None:
        self.data = data
        self.start = start
        self.end = start
        self.pieces: list[str] = []

    def add(self, text: str) -> None:
        self.pieces.append(text)
        self.end += len(text)

    def row(self) -> tuple[str, dict[str, Any]]:
        return DELTA, {**self.data, "delta": "".join(self.pieces), "offset": self.start}


class _Held:
    """A durable event waiting (at most ``linger_s``) to be written with the next ones."""

    __slots__ = ("data", "done", "event")

    def __init__(self, event: str, data: dict[str, Any], done: asyncio.Future[int | None]) -> None:
        self.event, self.data, self.done = event, data, done


Row = tuple[str, dict[str, Any], "asyncio.Future[int | None] | None"]


class _Batch:
    __slots__ = ("rows", "task")

    def __init__(self) -> None:
        self.rows: list[tuple[str, dict[str, Any]]] = []
        self.task: asyncio.Future[list[int]]


class TurnEventSink:
    """One per turn. ``emit`` is the pipeline's ``Emit``; ``close()`` flushes (call it in ``finally``)."""

    def __init__(self, hub: EventHub, conversation_id: str, turn_id: str | None, *,
                 flush_every_s: float = FLUSH_EVERY_S, linger_s: float = LINGER_S) -> None:  # fmt: skip
        self.hub = hub
        self.conversation_id = conversation_id
        self.turn_id = turn_id
        self.flush_every_s = flush_every_s
        self.linger_s = linger_s
        self._pending: list[_Draft | _Held] = []
        self._open: dict[str, _Draft] = {}  # draft id → its pending (not yet written) run
        self._ends: dict[str, int] = {}  # draft id → chars seen so far (when a delta has no offset)
        self._timer: asyncio.TimerHandle | None = None
        self._tail: asyncio.Future[list[int]] | None = None
        self._next: _Batch | None = None  # the write queued behind ``_tail``, still taking rows
        self._closed = False

    async def emit(self, event: str, data: dict[str, Any]) -> int | None:
        return await asyncio.shield(self.enqueue(event, data))  # a cancelled turn still logs what it announced

    async def emit_nowait(self, event: str, data: dict[str, Any]) -> None:
        """The pipeline's ``Emit`` when nobody needs the id now: the turn never waits for the log,
        and the event lingers to be written together with the next ones."""
        self.enqueue(event, data, linger=True)

    def enqueue(self, event: str, data: dict[str, Any], *, linger: bool = False) -> asyncio.Future[int | None]:
        """Queue ``event`` in emit order; the future gives its id once written. Events queued
        while the previous write is in flight go into the next write together (one transaction
        for a burst, instead of one per event); with ``linger`` the event also waits up to
        ``linger_s`` for more."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[int | None] = loop.create_future()
        if event == DELTA:
            self._add_delta(data)
            done.set_result(None)
            return done
        if linger and not self._closed:
            self._pending.append(_Held(event, data, done))
            self._arm(self.linger_s)
            return done
        self._write(self._take_pending() + [(event, data, done)])
        return done

    async def close(self) -> None:
        """Write what is pending and wait for every write; then prune this conversation's log."""
        if self._closed:
            return
        self._closed = True
        batch = self._take_pending()
        if batch:
            self._write(batch)
        if self._tail is not None:
            await asyncio.shield(self._tail)
        from app.events import log as event_log

        if self.hub.prune_due(self.conversation_id):
            self.hub.in_background(event_log.prune_conversation(self.hub.sessions, self.conversation_id))

    async def flush(self) -> None:
        batch = self._take_pending()
        if batch:
            await asyncio.shield(self._write(batch))

    # -- deltas ---------------------------------------------------------------------------------

    def _add_delta(self, data: dict[str, Any]) -> None:
        draft_id = str(data.get("draftId", ""))
        text = str(data.get("delta", ""))
        offset = data.get("offset")
        if not isinstance(offset, int):
            offset = self._ends.get(draft_id, 0)
            data = {**data, "offset": offset}
        self._ends[draft_id] = offset + len(text)
        self.hub.publish_live(self.conversation_id, DELTA, data)
        run = self._open.get(draft_id)
        if run is None or run.end != offset:  # a new run when the draft restarts or skips
            run = _Draft({k: v for k, v in data.items() if k not in ("delta", "offset")}, offset)
            self._open[draft_id] = run
            self._pending.append(run)
        run.add(text)
        if self._closed:
            self._write(self._take_pending())
        else:
            self._arm(self.flush_every_s)

    def _arm(self, delay: float) -> None:
        """Flush what is pending within ``delay`` (an earlier deadline already set stays)."""
        loop = asyncio.get_running_loop()
        if self._timer is not None:
            if self._timer.when() <= loop.time() + delay:
                return
            self._timer.cancel()
        self._timer = loop.call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        batch = self._take_pending()
        if batch:
            self._write(batch)

    def _take_pending(self) -> list[Row]:
        """Synchronously, so a batch's place in the write chain is its place in the emit order."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch: list[Row] = []
        for item in self._pending:
            if isinstance(item, _Held):
                batch.append((item.event, item.data, item.done))
            elif item.pieces:
                batch.append((*item.row(), None))
        self._pending.clear()
        self._open.clear()
        return batch

    # -- writes, chained in order -----------------------------------------------------------------

    def _write(self, rows: list[Row]) -> asyncio.Future[list[int]]:
        """Append ``rows`` to the write not started yet, or to a new one chained after the last;
        each row's future gets its id when that write is done."""
        batch = self._next
        if batch is None:
            batch = _Batch()
            batch.task = asyncio.ensure_future(self._write_after(self._tail, batch))
            self._tail = batch.task
            self._next = batch
        start = len(batch.rows)
        batch.rows.extend((event, data) for event, data, _ in rows)
        for index, (_, _, done) in enumerate(rows, start):
            if done is not None:
                batch.task.add_done_callback(functools.partial(_resolve, done, index))
        return batch.task

    async def _write_after(self, previous: asyncio.Future[list[int]] | None, batch: _Batch) -> list[int]:
        if previous is not None:
            await asyncio.wait([previous])
        if self._next is batch:
            self._next = None  # from here on, new rows go into the next write
        try:
            return await self.hub.append(self.conversation_id, self.turn_id, batch.rows)
        except Exception:  # noqa: BLE001 - the turn and its saved messages matter more than the log
            logger.warning("could not log %d conversation event(s) of turn %s", len(batch.rows), self.turn_id, exc_info=True)
            return []


def _resolve(done: asyncio.Future[int | None], index: int, task: asyncio.Future[list[int]]) -> None:
    if done.done():
        return
    ids = task.result() if not task.cancelled() and task.exception() is None else []
    done.set_result(ids[index] if index < len(ids) else None)
