"""Auto-mode runs in the database: every rule that must hold across server processes lives here.

* one run per conversation: ``auto_runs.running_lock`` is unique and holds the conversation id
  while a run runs, so a second ``POST …/auto`` gets 409 ``auto_already_running`` from any replica;
* a stop is a database fact (``stop_requested_at`` and ``stop_reason``), seen by the process
  running the run at its next look (``POLL_S``), whichever process was asked;
* the run's lease is renewed by its process like a turn's (``repository.LEASE_S``); a run whose
  lease lapsed (its process died or was stopped) is ended ``interrupted`` by any replica's
  reaper, or by the next ``POST …/auto``: it is never resumed. Every write of the runner is
  conditional on the row still running, so a process that wakes up late writes nothing.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import msgspec
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.models import AutoRun, Turn, utcnow
from app.errors import Conflict, NotFound
from app.turns.repository import LEASE_S, lease_remaining_s

INTERRUPTED = "interrupted"


class AutoAlreadyRunning(Conflict):
    code = "auto_already_running"

    def __init__(self, run_id: str | None, retry_after_s: int = 1) -> None:
        super().__init__("auto mode is already running in this conversation; stop it first (DELETE …/auto)",
                         details={"runId": run_id, "retryAfterS": max(1, retry_after_s)})  # fmt: skip


class AutoNotRunning(Conflict):
    code = "auto_not_running"

    def __init__(self, conversation_id: str) -> None:
        super().__init__("auto mode is not running in this conversation: there is nothing to stop",
                         details={"conversationId": conversation_id})  # fmt: skip


class Ended(msgspec.Struct, frozen=True):
    """A run that just ended: what ``auto.ended`` says."""

    run_id: str
    conversation_id: str
    status: str
    reason: str
    turns: int
    turns_done: int

    def event(self) -> dict[str, Any]:
        return {"runId": self.run_id, "conversationId": self.conversation_id, "status": self.status,
                "reason": self.reason, "turns": self.turns, "turnsDone": self.turns_done}  # fmt: skip


async def interrupt_expired(session: AsyncSession, *, conversation_id: str | None = None) -> list[Ended]:
    """End the running runs whose lease lapsed: ``interrupted``, lock released. Commits. A read
    first, so an idle look takes no write lock on SQLite; the update re-checks the lease."""
    t = AutoRun.__table__.c
    now = utcnow()
    where = [t.running_lock == conversation_id] if conversation_id is not None else [t.running_lock.is_not(None)]
    if (await session.execute(select(t.id).where(*where, t.lease_expires_at < now).limit(1))).first() is None:
        await session.commit()
        return []
    rows = await session.execute(
        update(AutoRun.__table__).where(*where, t.lease_expires_at < now)
        .values(status="interrupted", running_lock=None, lease_expires_at=None, ended_at=now, ended_reason=INTERRUPTED)
        .returning(t.id, t.conversation_id, t.turns, t.turns_done)
    )  # fmt: skip
    found = [Ended(run_id=i, conversation_id=c, status="interrupted", reason=INTERRUPTED, turns=n, turns_done=d)
             for i, c, n, d in rows]  # fmt: skip
    await session.commit()
    return found


async def start_run(sessions: async_sessionmaker[AsyncSession], owner_id: str, conversation_id: str, *, turns: int,
                    delay_ms: int, max_seconds: float) -> tuple[AutoRun, list[Ended]]:  # fmt: skip
    """A new running run (the caller checked the conversation is the owner's), and the dead runs
    of the conversation it found and ended first."""
    async with sessions() as session:
        ended = await interrupt_expired(session, conversation_id=conversation_id)
        now = utcnow()
        run = AutoRun(conversation_id=conversation_id, owner_id=owner_id, status="running", turns=turns, turns_done=0,
                      delay_ms=delay_ms, running_lock=conversation_id, started_at=now,
                      deadline_at=now + timedelta(seconds=max_seconds),
                      lease_expires_at=now + timedelta(seconds=LEASE_S))  # fmt: skip
        session.add(run)
        try:
            await session.commit()
        except IntegrityError:
            await session.rollback()
            other = (await session.execute(
                select(AutoRun.id, AutoRun.lease_expires_at).where(AutoRun.running_lock == conversation_id)
            )).first()  # fmt: skip
            if other is None:
                raise AutoAlreadyRunning(None) from None
            raise AutoAlreadyRunning(other.id, lease_remaining_s(other.lease_expires_at)) from None
        return run, ended


async def running(session: AsyncSession, owner_id: str, conversation_id: str) -> AutoRun | None:
    return await session.scalar(
        select(AutoRun).where(AutoRun.running_lock == conversation_id, AutoRun.owner_id == owner_id)
    )


async def latest(session: AsyncSession, conversation_id: str) -> AutoRun | None:
    """The running run, else the newest one."""
    return await session.scalar(
        select(AutoRun).where(AutoRun.conversation_id == conversation_id)
        .order_by(AutoRun.running_lock.is_(None), AutoRun.started_at.desc()).limit(1)
    )  # fmt: skip


async def read(sessions: async_sessionmaker[AsyncSession], run_id: str) -> AutoRun | None:
    async with sessions() as session:
        return await session.get(AutoRun, run_id)


async def request_stop(sessions: async_sessionmaker[AsyncSession], owner_id: str, conversation_id: str,
                       reason: str) -> AutoRun | None:  # fmt: skip
    """Ask the conversation's running run to stop (the first reason stands); None when none runs."""
    async with sessions() as session:
        run = await running(session, owner_id, conversation_id)
        if run is None:
            return None
        if run.stop_requested_at is None:
            await session.execute(
                update(AutoRun).where(AutoRun.id == run.id, AutoRun.running_lock.is_not(None),
                                      AutoRun.stop_requested_at.is_(None))
                .values(stop_requested_at=utcnow(), stop_reason=reason)
            )  # fmt: skip
            await session.commit()
        return run


async def stop_in(session: AsyncSession, owner_id: str, conversation_id: str, reason: str) -> str | None:
    """In the caller's transaction (a user message being stored): ask the conversation's running
    run to stop, one statement. The id of the run newly asked; None when none runs or it was
    already asked (the first reason stands)."""
    a = AutoRun.__table__.c
    done = await session.execute(
        update(AutoRun.__table__)
        .where(a.running_lock == conversation_id, a.owner_id == owner_id, a.stop_requested_at.is_(None))
        .values(stop_requested_at=utcnow(), stop_reason=reason)
        .returning(a.id)
    )  # fmt: skip
    return done.scalar()


async def running_auto_turn(session: AsyncSession, conversation_id: str) -> str | None:
    """The conversation's running turn when it is an auto turn."""
    return await session.scalar(select(Turn.id).where(Turn.running_lock == conversation_id, Turn.trigger == "auto"))


async def _update_running(sessions: async_sessionmaker[AsyncSession], run_id: str, **values: Any) -> bool:
    async with sessions() as session:
        done = await session.execute(
            update(AutoRun).where(AutoRun.id == run_id, AutoRun.running_lock.is_not(None)).values(**values)
        )
        await session.commit()
        return bool(done.rowcount)


async def renew_lease(sessions: async_sessionmaker[AsyncSession], run_id: str) -> bool:
    """Push the run's lease ahead; False once it is not running (ended, or taken as interrupted)."""
    return await _update_running(sessions, run_id, lease_expires_at=utcnow() + timedelta(seconds=LEASE_S))


async def turn_started(sessions: async_sessionmaker[AsyncSession], run_id: str, turn_id: str) -> bool:
    return await _update_running(sessions, run_id, last_turn_id=turn_id)


async def turn_done(sessions: async_sessionmaker[AsyncSession], run_id: str) -> bool:
    return await _update_running(sessions, run_id, turns_done=AutoRun.turns_done + 1)


async def finish(sessions: async_sessionmaker[AsyncSession], run_id: str, status: str, reason: str) -> Ended | None:
    """End the run (lock released); None when it had already ended (e.g. taken as interrupted)."""
    t = AutoRun.__table__.c
    async with sessions() as session:
        row = (await session.execute(
            update(AutoRun.__table__).where(t.id == run_id, t.running_lock.is_not(None))
            .values(status=status, ended_reason=reason, running_lock=None, lease_expires_at=None, ended_at=utcnow())
            .returning(t.conversation_id, t.turns, t.turns_done)
        )).first()  # fmt: skip
        await session.commit()
    if row is None:
        return None
    return Ended(run_id=run_id, conversation_id=row.conversation_id, status=status, reason=reason, turns=row.turns,
                 turns_done=row.turns_done)  # fmt: skip


def not_found(conversation_id: str) -> NotFound:
    return NotFound("auto mode never ran in this conversation", code="auto_run_not_found",
                    details={"conversationId": conversation_id})  # fmt: skip
