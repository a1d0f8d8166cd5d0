"""Stop a running turn (issue 27): ``POST …/turns/{id}/cancel`` on any replica.

The request is a database fact: ``turns.cancel_requested_at`` is set on the running turn (and a
``cancel`` control row written) in one transaction. The process running the turn sees it two ways:
at once when the request reached that same process (``RunningTurns``), otherwise within
``POLL_S`` by reading the column (``RunningTurns.watch``). The pipeline then stops the turn's
steps: replies already saved stay (a save in progress completes), drafts the user saw and no
message replaced are taken back with ``message.discarded``, and the turn ends ``cancelled``
(``turn.cancelled``), its lock released. A cancelled reply writes no Story state: its job is
cancelled before its save, and the Story's write is part of that save.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Coroutine
from typing import Any, TypeVar

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.background import running_beside
from app.db import fence
from app.db.models import Turn, utcnow
from app.errors import Conflict
from app.messages.controls import record_control
from app.turns.plugins import Emit
from app.turns.repository import load_turn

log = logging.getLogger("app.turns")
POLL_S = 0.25  # a cancel sent to another replica is seen within this (one primary-key read)
CANCELLED = {"code": "turn_cancelled", "message": "the user stopped the turn"}
T = TypeVar("T")


class TurnNotRunning(Conflict):
    code = "turn_not_running"

    def __init__(self, turn_id: str, status: str) -> None:
        super().__init__(f"turn {turn_id} is not running (it is {status}): there is nothing to stop",
                         details={"turnId": turn_id, "status": status})  # fmt: skip


class TurnCancelled(Exception):
    """The turn's steps were stopped by a cancel request."""


async def request_cancel(session: AsyncSession, owner_id: str, conversation_id: str, turn_id: str) -> Turn:
    """Mark the running turn for stopping (the caller commits); 404 unknown, 409 already ended.
    Asking twice is the same request: the first time stands."""
    turn = await load_turn(session, owner_id, conversation_id, turn_id)
    if turn.status != "running":
        raise TurnNotRunning(turn_id, turn.status)
    done = await session.execute(
        update(Turn)
        .where(Turn.id == turn_id, Turn.running_lock.is_not(None), Turn.cancel_requested_at.is_(None))
        .values(cancel_requested_at=utcnow())
    )  # fmt: skip
    if done.rowcount:
        await record_control(session, conversation_id, "cancel", turn_id=turn_id)
    return turn


async def cancel_requested(sessions: async_sessionmaker[AsyncSession], turn_id: str) -> bool:
    async with sessions() as session:
        found = await session.scalar(select(Turn.cancel_requested_at).where(Turn.id == turn_id))
        return found is not None


class RunningTurns:
    """This process's running turns, each with the event that stops it."""

    def __init__(self) -> None:
        self._stops: dict[str, asyncio.Event] = {}

    def stop(self, turn_id: str) -> bool:
        """Stop the turn if it runs here (the fast path); False when it runs elsewhere or not at all."""
        if (event := self._stops.get(turn_id)) is None:
            return False
        event.set()
        return True

    @contextlib.asynccontextmanager
    async def watch(self, sessions: async_sessionmaker[AsyncSession], turn_id: str,
                    every_s: float = POLL_S) -> AsyncIterator[asyncio.Event]:  # fmt: skip
        """The event set when the turn is asked to stop, here or on another replica."""
        stop = self._stops[turn_id] = asyncio.Event()

        async def poll() -> None:
            with fence.unfenced():  # a read of the turn's own row, not one of its writes
                while not stop.is_set():
                    await asyncio.sleep(every_s)
                    try:
                        if await cancel_requested(sessions, turn_id):
                            stop.set()
                    except Exception:  # noqa: BLE001 - a missed read is retried next time
                        log.warning("turn %s: could not read its cancel request", turn_id, exc_info=True)

        try:
            async with running_beside(poll(), name=f"cancel-watch-{turn_id}"):
                yield stop
        finally:
            self._stops.pop(turn_id, None)


async def unless_stopped(work: Coroutine[Any, Any, T], stop: asyncio.Event | None) -> T:
    """Run ``work``; if ``stop`` is set first, cancel it, wait for it to unwind and raise
    ``TurnCancelled``. Cancelling the caller cancels ``work`` too."""
    if stop is None:
        return await work
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(stop.wait())
    stopped = False
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        stopped = not task.done()
    finally:
        waiter.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)  # unwound, whatever it raised
    if stopped:
        raise TurnCancelled
    return task.result()


class VisibleDrafts:
    """Wraps a turn's ``emit``: remembers the drafts the user saw (``message.delta``) and those a
    saved message replaced (``message.created``), so a stop can take back the rest."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self._open: dict[str, str] = {}  # draft id -> agent id

    async def emit(self, event: str, data: dict[str, Any]) -> None:
        if event == "message.delta":
            self._open.setdefault(data["draftId"], data.get("agentId", ""))
        elif event in ("message.created", "message.discarded"):
            self._open.pop(data.get("draftId") or "", None)
        await self._emit(event, data)

    async def discard_open(self, turn_id: str) -> None:
        for draft_id, agent_id in list(self._open.items()):
            await self.emit("message.discarded", {"turnId": turn_id, "draftId": draft_id, "agentId": agent_id,
                                                  "problems": ["cancelled"]})  # fmt: skip
