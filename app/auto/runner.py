"""This process's auto-mode runs: one asyncio task per run, in the process that accepted the POST.

A run is a sequence of Continue turns with no named agent (``turns.trigger = 'auto'``), each
through the normal turn machinery (``run_logged``: the turn lock and lease, fencing, the event
log, Stop), so the speaker is chosen among the members by the usual selection — with the last
speaker resting (``TurnContext.resting``: never the same speaker twice in a row unless alone) —
and emotion, Story, lore and suggestions happen as in any Continue. Between turns it waits
``delayMs``, looking at its row every ``POLL_S`` (a stop asked on another replica).

A run ends ``completed`` (``turns_done``: it ran ``turns`` turns; ``time_limit``: the total time
``COMPANION_AUTO_MAX_SECONDS`` ran out, checked between turns and during the delay — a turn that
started finishes),
``completed`` (``nobody_to_speak``: a turn found no member to speak), ``stopped`` (``user_stop``: ``DELETE …/auto``; ``user_message``: a user message; ``turn_cancelled``:
Stop on the auto turn itself), ``failed`` (``turn_failed``: an auto turn failed, e.g. the model is
down or every reply was dropped) or ``interrupted`` (``interrupted``: its process went away;
``server_stopping``: this server shut down). ``auto.ended`` says which on the conversation's events.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.auto import repository as runs
from app.background import running_beside
from app.db.models import AutoRun, utcnow
from app.events.hub import EventHub
from app.turns import reaper
from app.turns import repository as turns
from app.turns.cancel import POLL_S, TurnNotRunning, request_cancel
from app.turns.controller import run_logged
from app.turns.pipeline import TurnPipeline

log = logging.getLogger("app.auto")
CLOSE_WAIT_S = 5.0  # on shutdown, how long a run's running turn gets to stop before it is cancelled


async def announce(hub: EventHub, ended: list[runs.Ended]) -> None:
    for run in ended:
        try:
            await hub.append(run.conversation_id, None, [("auto.ended", run.event())])
        except Exception:  # noqa: BLE001 - GET …/auto still says how it ended
            log.warning("could not announce the end of auto run %s", run.run_id, exc_info=True)


def _passed(deadline: Any) -> bool:
    if deadline.tzinfo is None:  # a raw SQLite read is naive UTC
        from datetime import UTC

        deadline = deadline.replace(tzinfo=UTC)
    return utcnow() >= deadline


class AutoRunner:
    def __init__(self, pipeline: TurnPipeline, hub: EventHub) -> None:
        self.pipeline, self.hub = pipeline, hub
        self.sessions: async_sessionmaker[AsyncSession] = pipeline.sessions
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._wake: dict[str, asyncio.Event] = {}
        self._turn: dict[str, str] = {}  # run id -> its running turn
        self._closing = False

    def launch(self, run: AutoRun) -> None:
        self._wake[run.id] = asyncio.Event()
        self._tasks[run.id] = asyncio.create_task(self._run(run.id, run.owner_id, run.conversation_id),
                                                  name=f"auto-run-{run.id}")  # fmt: skip

    def wake(self, run_id: str) -> None:
        """A stop reached this process: end the pause at once (the fast path; the row decides)."""
        if (event := self._wake.get(run_id)) is not None:
            event.set()

    async def close(self) -> None:
        """The server is stopping: each run stops its turn, ends ``interrupted`` and is announced."""
        self._closing = True
        for run_id, event in self._wake.items():
            event.set()
            if (turn_id := self._turn.get(run_id)) is not None:
                self.pipeline.running.stop(turn_id)
        tasks = list(self._tasks.values())
        if tasks:
            _, slow = await asyncio.wait(tasks, timeout=CLOSE_WAIT_S)
            for task in slow:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _run(self, run_id: str, owner_id: str, conversation_id: str) -> None:
        outcome: tuple[str, str] | None = ("failed", "error")
        try:
            async with running_beside(self._beat(run_id), name=f"auto-lease-{run_id}"):
                outcome = await self._turns(run_id, owner_id, conversation_id)
        except asyncio.CancelledError:
            outcome = ("interrupted", "server_stopping")
        except Exception:  # noqa: BLE001 - recorded on the run
            log.exception("auto run %s failed", run_id)
        finally:
            self._tasks.pop(run_id, None)
            self._wake.pop(run_id, None)
            self._turn.pop(run_id, None)
            if outcome is not None:
                with contextlib.suppress(Exception):
                    if (ended := await runs.finish(self.sessions, run_id, *outcome)) is not None:
                        await announce(self.hub, [ended])

    async def _beat(self, run_id: str) -> None:
        while True:
            await asyncio.sleep(turns.HEARTBEAT_S)
            try:
                if not await runs.renew_lease(self.sessions, run_id):
                    return  # ended (or taken as interrupted): the loop sees it at its next look
            except Exception:  # noqa: BLE001 - a missed beat is retried; three in a row let the lease lapse
                log.warning("auto run %s: lease renewal failed", run_id, exc_info=True)

    async def _turns(self, run_id: str, owner_id: str, conversation_id: str) -> tuple[str, str] | None:
        """The run's turns; its end (status, reason), or None when the row was ended elsewhere."""
        paused_after = 0
        while True:
            run = await runs.read(self.sessions, run_id)
            if run is None or run.running_lock is None:
                return None
            if self._closing:
                return "interrupted", "server_stopping"
            if run.stop_requested_at is not None:
                return "stopped", run.stop_reason or "user_stop"
            if run.turns_done >= run.turns:
                return "completed", "turns_done"
            if _passed(run.deadline_at):
                return "completed", "time_limit"
            if run.turns_done > paused_after and run.delay_ms:
                paused_after = run.turns_done
                await self._pause(run_id, run.delay_ms / 1000)
                continue
            try:
                started = await turns.start_turn(self.sessions, owner_id, conversation_id, None, None,
                                                 stale_after_s=self.pipeline.settings.turn_timeout_s * 2,
                                                 trigger="auto")  # fmt: skip
            except turns.TurnInProgress:  # someone's Continue or regeneration: wait for the lock
                await self._pause(run_id, POLL_S)
                continue
            await reaper.announce(self.hub, started.abandoned)
            status, spoke = await self._one_turn(run_id, owner_id, started)
            if self._closing:  # its turn was stopped because this server is shutting down
                if status == "completed":
                    await runs.turn_done(self.sessions, run_id)
                return "interrupted", "server_stopping"
            if status == "completed":
                await runs.turn_done(self.sessions, run_id)
                if not spoke:  # every member muted (or none left): more turns would say nothing either
                    return "completed", "nobody_to_speak"
            elif status == "cancelled":
                again = await runs.read(self.sessions, run_id)
                if again is not None and again.running_lock is not None and again.stop_requested_at is None:
                    return "stopped", "turn_cancelled"  # Stop pressed on the auto turn itself
            else:
                return "failed", "turn_failed"

    async def _one_turn(self, run_id: str, owner_id: str, started: turns.StartedTurn) -> tuple[str, bool]:
        """The turn's status, and whether a reply was saved."""
        turn = started.turn
        self._turn[run_id] = turn.id
        try:
            await runs.turn_started(self.sessions, run_id, turn.id)
            run = await runs.read(self.sessions, run_id)
            if run is None or run.running_lock is None or run.stop_requested_at is not None or self._closing:
                # stopped while this turn was being started: it stops at its first look
                async with self.sessions() as session:
                    with contextlib.suppress(TurnNotRunning):
                        await request_cancel(session, owner_id, turn.conversation_id, turn.id)
                        await session.commit()
            sink = self.hub.sink(turn.conversation_id, turn.id)
            result = await asyncio.shield(asyncio.ensure_future(
                run_logged(self.pipeline, started, sink, sink.emit_nowait)))  # fmt: skip
            return str(result.get("status")), bool(result.get("agentMessages"))
        finally:
            self._turn.pop(run_id, None)

    async def _pause(self, run_id: str, seconds: float) -> None:
        """Wait ``seconds``, or less when the run is asked to stop (here at once, elsewhere within
        ``POLL_S``) or its time is up."""
        wake = self._wake.get(run_id)
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            if wake is None or wake.is_set():
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), min(POLL_S, left))
            run = await runs.read(self.sessions, run_id)
            if run is None or run.running_lock is None or run.stop_requested_at is not None or _passed(run.deadline_at):
                return
