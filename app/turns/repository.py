"""Turn persistence. Every cross-request rule lives in the database:

* one running turn per conversation: ``turns.running_lock`` is unique and holds the conversation
  id while a turn runs, so a second server process gets the same 409 as this one;
* that lock is a **lease**: ``lease_expires_at`` is pushed ``LEASE_S`` ahead every
  ``HEARTBEAT_S`` by the process running the turn (``lease_heartbeat``), and by each of the
  turn's writes (``app.db.fence``). A lease that was not renewed (three missed beats: the process
  died or stopped) is expired: any replica's reaper (``app.turns.reaper``, every
  ``REAP_EVERY_S``) marks the turn ``failed`` (``turn_abandoned``) and announces ``turn.failed``,
  and the next turn in the conversation does the same if it gets there first. So after a crash a
  conversation accepts turns again within ``LEASE_S`` seconds, whatever the turn timeout, and
  the 409's ``Retry-After`` is the lease's real remaining time;
* every write of a turn is **fenced** (``app.db.fence``): once its lease is lost, a process that
  wakes up writes nothing more, and its turn stops at its next write;
* idempotency: ``(conversation_id, idempotency_key)`` is unique; the same key with the same
  content is the same turn, with other content a 422 ``idempotency_key_reused``;
* the user message and the turn row are written in one transaction.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import AsyncIterator
from datetime import UTC, timedelta
from typing import Any

import msgspec
from sqlalchemy import and_, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.background import running_beside
from app.conversations.service import get_owned
from app.db import fence
from app.db.models import Conversation, Message, Turn, new_id, utcnow
from app.errors import Conflict, ValidationFailed
from app.messages.store import InTransaction, insert_message
from app.metrics import record_turn

log = logging.getLogger("app.turns")
HEARTBEAT_S = 1.0
LEASE_S = 4.0  # three missed beats and a margin: a new turn is accepted within ~4 s of a crash
REAP_EVERY_S = 1.0
ABANDONED = {"code": fence.ABANDONED_CODE, "message": "the process running this turn stopped renewing its lease"}
fence.set_lease_seconds(LEASE_S)


class TurnInProgress(Conflict):
    code = "turn_in_progress"

    def __init__(self, turn_id: str | None, retry_after_s: int = 1) -> None:
        super().__init__(
            "another turn is still running in this conversation; retry when it has finished",
            details={"runningTurnId": turn_id, "retryAfterS": max(1, retry_after_s)},
        )
        self.retryable = True


class IdempotencyKeyReused(ValidationFailed):
    code = "idempotency_key_reused"

    def __init__(self, key: str, turn_id: str) -> None:
        super().__init__(
            "this idempotency key was already used for a different message in this conversation",
            details={"idempotencyKey": key, "turnId": turn_id},
        )


def lease_remaining_s(lease_expires_at: Any) -> int:
    """Whole seconds until a running turn's lease lapses: the honest ``Retry-After`` of a 409."""
    if lease_expires_at is None:
        return int(LEASE_S)
    if lease_expires_at.tzinfo is None:  # a raw SQLite read is naive UTC
        lease_expires_at = lease_expires_at.replace(tzinfo=UTC)
    return math.ceil(max(0.0, (lease_expires_at - utcnow()).total_seconds()))


async def _in_progress(session: AsyncSession, conversation_id: str) -> TurnInProgress:
    row = (await session.execute(
        select(Turn.id, Turn.lease_expires_at).where(Turn.running_lock == conversation_id)
    )).first()  # fmt: skip
    if row is None:
        return TurnInProgress(None)
    return TurnInProgress(row.id, lease_remaining_s(row.lease_expires_at))


class StartedTurn:
    def __init__(self, turn: Turn, user_message: Message | None, conversation: Conversation, replay: bool,
                 abandoned: list[Abandoned] | None = None) -> None:  # fmt: skip
        self.turn = turn
        self.user_message = user_message
        self.conversation = conversation
        self.replay = replay
        self.abandoned = abandoned or []  # the dead turns this start took over (to announce)


class Abandoned(msgspec.Struct, frozen=True):
    turn_id: str
    conversation_id: str

    def event(self) -> dict[str, Any]:
        """The ``turn.failed`` followers get for it (the shape of a turn result)."""
        return {"turnId": self.turn_id, "status": "failed", "conversationId": self.conversation_id,
                "userMessage": None, "agentMessages": [], "error": ABANDONED}  # fmt: skip


async def _by_key(session: AsyncSession, conversation_id: str, key: str) -> Turn | None:
    return await session.scalar(
        select(Turn).where(Turn.conversation_id == conversation_id, Turn.idempotency_key == key)
    )


async def abandon_expired(session: AsyncSession, *, conversation_id: str | None = None,
                          stale_after_s: float = 3600.0) -> list[Abandoned]:  # fmt: skip
    """End the running turns whose lease expired (their process stopped): ``failed``,
    ``turn_abandoned``, lock released. Commits. One conversation's, or every conversation's.

    A read first, so the reaper's idle check takes no write lock on SQLite; the update then
    re-checks the lease, so a turn renewed in between is left alone. (A row without a lease
    predates migration 0008: stale once older than ``stale_after_s``.)"""
    t = Turn.__table__.c
    now = utcnow()
    stale = or_(t.lease_expires_at < now,
                and_(t.lease_expires_at.is_(None), t.created_at < now - timedelta(seconds=stale_after_s)))  # fmt: skip
    where = [t.running_lock == conversation_id] if conversation_id is not None else [t.running_lock.is_not(None)]
    if (await session.execute(select(t.id).where(*where, stale).limit(1))).first() is None:
        await session.commit()
        return []
    rows = await session.execute(
        update(Turn.__table__).where(*where, stale)
        .values(status="failed", running_lock=None, lease_expires_at=None, completed_at=now, error=ABANDONED)
        .returning(t.id, t.conversation_id)
    )  # fmt: skip
    found = [Abandoned(turn_id=i, conversation_id=c) for i, c in rows]
    await session.commit()
    for _ in found:
        record_turn("failed", ABANDONED)
    return found


async def _release_stale(session: AsyncSession, conversation_id: str, stale_after_s: float) -> list[Abandoned]:
    return await abandon_expired(session, conversation_id=conversation_id, stale_after_s=stale_after_s)


async def _replay(session: AsyncSession, found: Turn, content: str | None, conv: Conversation,
                  abandoned: list[Abandoned]) -> StartedTurn:  # fmt: skip
    message = await session.get(Message, found.user_message_id) if found.user_message_id else None
    # ``content`` None is a Continue (no user message): a key of a message turn is not one, and back.
    if (message is not None and message.content != content) or (found.user_message_id is None) != (content is None):
        raise IdempotencyKeyReused(found.idempotency_key or "", found.id)
    return StartedTurn(found, message, conv, replay=True, abandoned=abandoned)


async def renew_lease(sessions: async_sessionmaker[AsyncSession], turn_id: str) -> bool:
    """Push the lease of a still-running turn ``LEASE_S`` ahead; False once it is not running."""
    async with sessions() as session:
        done = await session.execute(
            update(Turn)
            .where(Turn.id == turn_id, Turn.running_lock.is_not(None))
            .values(lease_expires_at=utcnow() + timedelta(seconds=LEASE_S))
        )  # fmt: skip
        await session.commit()
        return bool(done.rowcount)


@contextlib.asynccontextmanager
async def lease_heartbeat(
    sessions: async_sessionmaker[AsyncSession], turn_id: str, every_s: float = HEARTBEAT_S
) -> AsyncIterator[None]:
    """Renew the turn's lease every ``every_s`` seconds while the body runs (the turn's process is alive)."""

    async def beat() -> None:
        with fence.unfenced():  # the renewal is the fence's own statement: one UPDATE a beat, not two
            while True:
                await asyncio.sleep(every_s)
                try:
                    if not await renew_lease(sessions, turn_id):
                        log.warning("turn %s: its lease is gone (taken over or ended); its writes are refused", turn_id)
                        return
                except Exception:  # noqa: BLE001 - a missed beat is retried; three in a row let the lease lapse
                    log.warning("turn %s: lease renewal failed", turn_id, exc_info=True)

    async with running_beside(beat(), name=f"lease-heartbeat-{turn_id}"):
        yield


async def start_turn(
    sessions: async_sessionmaker[AsyncSession],
    owner_id: str,
    conversation_id: str,
    content: str | None,
    idempotency_key: str | None,
    *,
    stale_after_s: float,
    in_transaction: InTransaction | None = None,
    trigger: str | None = None,
) -> StartedTurn:
    """``content`` None starts a Continue turn: the lock and the turn row, no user message.
    ``in_transaction`` runs in the transaction that stores the user message (e.g. the old
    suggestions are cleared in the same write). ``trigger`` is recorded on the row (default:
    ``user`` with a message, else ``continue``)."""
    async with sessions() as session:
        conv = await get_owned(session, owner_id, conversation_id)
        await session.commit()  # end the read: the turn row is the first write of its transaction
        abandoned: list[Abandoned] = []
        if idempotency_key:  # a crashed turn's key replays as the failed turn it is
            abandoned = await _release_stale(session, conversation_id, stale_after_s)
            if found := await _by_key(session, conversation_id, idempotency_key):
                return await _replay(session, found, content, conv, abandoned)
        for attempt in (1, 2):
            message_id = new_id() if content is not None else None
            turn = Turn(
                id=new_id(), conversation_id=conversation_id, owner_id=owner_id, status="running",
                idempotency_key=idempotency_key, running_lock=conversation_id, user_message_id=message_id,
                lease_expires_at=utcnow() + timedelta(seconds=LEASE_S),
                trigger=trigger or ("user" if content is not None else "continue"),
            )  # fmt: skip
            session.add(turn)
            try:
                await session.flush()
                message = None
                if content is not None:
                    message = await insert_message(session, conversation_id, role="user", content=content,
                                                   turn_id=turn.id, message_id=message_id)  # fmt: skip
                    if in_transaction is not None:
                        await in_transaction(session, conversation_id)
                await session.commit()
                return StartedTurn(turn, message, conv, replay=False, abandoned=abandoned)
            except IntegrityError:
                await session.rollback()
                await session.refresh(conv)
                if idempotency_key and (found := await _by_key(session, conversation_id, idempotency_key)):
                    return await _replay(session, found, content, conv, abandoned)
                if attempt == 1:  # the lock is held: a crashed turn's stale lease is released, then once more
                    abandoned += await _release_stale(session, conversation_id, stale_after_s)
                    continue
                raise await _in_progress(session, conversation_id) from None
        raise AssertionError("unreachable")


async def finish_turn(
    sessions: async_sessionmaker[AsyncSession],
    turn_id: str,
    *,
    status: str,
    result: dict[str, Any] | None,
    error: dict[str, Any] | None,
    intent: dict[str, Any] | None,
    emotion: dict[str, Any] | None,
    timings: dict[str, Any],
    usage: dict[str, Any],
) -> None:
    """The turn's last fenced write: raises ``fence.LeaseLost`` if another process took it over."""
    t = Turn.__table__.c  # a Core statement: once a turn, the ORM's update path cost more than the SQL
    async with sessions() as session:
        done = await session.execute(
            update(Turn.__table__)
            .where(t.id == turn_id, t.running_lock.is_not(None))
            .values(status=status, running_lock=None, lease_expires_at=None, result=result, error=error, intent=intent,
                    emotion=emotion, timings=timings, usage=usage, completed_at=utcnow())
        )  # fmt: skip
        if not done.rowcount:
            raise fence.LeaseLost(turn_id)
        await session.commit()
    if (current := fence.current()) is not None and current.turn_id == turn_id:
        current.end()  # the turn is over and ours: its last events and late parts need no lease
    record_turn(status, error)


async def load_turn(session: AsyncSession, owner_id: str, conversation_id: str, turn_id: str) -> Turn:
    from app.errors import NotFound

    await get_owned(session, owner_id, conversation_id)
    turn = await session.get(Turn, turn_id)
    if turn is None or turn.conversation_id != conversation_id:
        raise NotFound(f"turn {turn_id} not found", code="turn_not_found")
    return turn
