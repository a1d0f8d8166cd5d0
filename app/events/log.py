"""The event table: append (ordered per conversation), read after an id, prune.

Retention: a conversation keeps at most ``KEEP_PER_CONVERSATION`` events (pruned when a turn's
sink closes) and no event older than ``KEEP_DAYS`` days (pruned at most once per
``PRUNE_EVERY_S`` by whichever process writes). A client resuming from a pruned id simply gets
what is left: the messages themselves stay readable through ``GET …/messages``.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import msgspec
from sqlalchemy import delete, func, insert, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.models import ConversationEvent, utcnow

KEEP_PER_CONVERSATION = 2000
KEEP_DAYS = 7
PRUNE_EVERY_S = 3600.0
READ_BATCH = 500
SQLITE_ROWS_PER_INSERT = 100
NOTIFY_CHANNEL = "conversation_events"
LOCK_NAMESPACE = 0x45564E54  # "EVNT": the two-key advisory lock space, apart from single-key locks


class StoredEvent(msgspec.Struct, frozen=True):
    id: int
    event: str
    data: dict[str, Any]
    turn_id: str | None = None


async def append(
    sessions: async_sessionmaker[AsyncSession], conversation_id: str, turn_id: str | None,
    events: list[tuple[str, dict[str, Any]]], *, postgres: bool,
) -> list[int]:
    """Insert ``events`` in order in one transaction and return their ids.

    On PostgreSQL a transaction-scoped advisory lock per conversation is taken *before* the ids
    are drawn, so per conversation the commit order is the id order: a follower that has read id
    N never later meets a row < N committing late. ``pg_notify`` is delivered on commit only.
    """
    table = ConversationEvent.__table__
    now = utcnow()
    values = [{"conversation_id": conversation_id, "turn_id": turn_id, "event": e, "data": _plain(d), "created_at": now}
              for e, d in events]  # fmt: skip
    async with sessions() as session, session.begin():
        if postgres:
            await session.execute(text("SELECT pg_advisory_xact_lock(:ns, hashtext(:c))"), {"ns": LOCK_NAMESPACE, "c": conversation_id})
        if len(values) == 1:  # Core, not the ORM: this runs for every event of every turn
            ids = [(await session.execute(insert(table).values(values[0]).returning(table.c.id))).scalar_one()]
        elif postgres:
            result = await session.execute(insert(table).returning(table.c.id, sort_by_parameter_order=True), values)
            ids = list(result.scalars())
        else:  # one multi-row statement (sort_by_parameter_order runs row by row on SQLite): under the
            # write lock a statement's rowids grow in row order; RETURNING's own order is unspecified
            ids = []
            for start in range(0, len(values), SQLITE_ROWS_PER_INSERT):  # bound the bound parameters
                result = await session.execute(insert(table).values(values[start:start + SQLITE_ROWS_PER_INSERT])
                                               .returning(table.c.id))  # fmt: skip
                ids.extend(sorted(result.scalars()))
        if postgres:
            await session.execute(text("SELECT pg_notify(:ch, :c)"), {"ch": NOTIFY_CHANNEL, "c": conversation_id})
    return ids


def _plain(data: dict[str, Any]) -> dict[str, Any]:
    """What a client of the live stream sees (``json.dumps(..., default=str)``), so a replay is identical."""
    return json.loads(json.dumps(data, ensure_ascii=False, default=str))


async def read_after(
    sessions: async_sessionmaker[AsyncSession], conversation_id: str, after_id: int, *,
    turn_id: str | None = None, limit: int = READ_BATCH,
) -> list[StoredEvent]:
    query = select(ConversationEvent.id, ConversationEvent.event, ConversationEvent.data, ConversationEvent.turn_id).where(
        ConversationEvent.conversation_id == conversation_id, ConversationEvent.id > after_id
    )
    if turn_id is not None:
        query = query.where(ConversationEvent.turn_id == turn_id)
    async with sessions() as session:
        rows = await session.execute(query.order_by(ConversationEvent.id).limit(limit))
        return [StoredEvent(id=i, event=e, data=d, turn_id=t) for i, e, d, t in rows]


async def latest_id(sessions: async_sessionmaker[AsyncSession], conversation_id: str) -> int:
    async with sessions() as session:
        found = await session.scalar(
            select(func.max(ConversationEvent.id)).where(ConversationEvent.conversation_id == conversation_id)
        )
        return int(found or 0)


async def latest_issued_id(sessions: async_sessionmaker[AsyncSession]) -> int:
    """The newest event id of any conversation (ids are one sequence): no client holds a larger one."""
    async with sessions() as session:
        return int(await session.scalar(select(func.max(ConversationEvent.id))) or 0)


async def read_events(sessions: async_sessionmaker[AsyncSession], conversation_id: str, turn_id: str,
                      names: tuple[str, ...], up_to_id: int) -> list[StoredEvent]:  # fmt: skip
    """The turn's events of those names up to an id (a handful: its terminal and closing events)."""
    async with sessions() as session:
        rows = await session.execute(
            select(ConversationEvent.id, ConversationEvent.event, ConversationEvent.data).where(
                ConversationEvent.conversation_id == conversation_id, ConversationEvent.turn_id == turn_id,
                ConversationEvent.event.in_(names), ConversationEvent.id <= up_to_id,
            ).order_by(ConversationEvent.id).limit(10)
        )  # fmt: skip
        return [StoredEvent(id=i, event=e, data=d, turn_id=turn_id) for i, e, d in rows]


async def prune_conversation(sessions: async_sessionmaker[AsyncSession], conversation_id: str,
                             keep: int = KEEP_PER_CONVERSATION) -> int:  # fmt: skip
    async with sessions() as session, session.begin():
        cutoff = await session.scalar(
            select(ConversationEvent.id).where(ConversationEvent.conversation_id == conversation_id)
            .order_by(ConversationEvent.id.desc()).offset(keep).limit(1)
        )  # fmt: skip
        if cutoff is None:
            return 0
        result = await session.execute(
            delete(ConversationEvent).where(ConversationEvent.conversation_id == conversation_id,
                                            ConversationEvent.id <= cutoff)  # fmt: skip
        )
        return result.rowcount or 0


async def prune_old(sessions: async_sessionmaker[AsyncSession], days: int = KEEP_DAYS) -> int:
    async with sessions() as session, session.begin():
        result = await session.execute(
            delete(ConversationEvent).where(ConversationEvent.created_at < utcnow() - timedelta(days=days))
        )
        return result.rowcount or 0
