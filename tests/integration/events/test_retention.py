"""Retention: the newest events of a conversation are kept, old ones pruned."""

from __future__ import annotations

import time

from datetime import timedelta

from sqlalchemy import func, select, update

from app.db.models import ConversationEvent, utcnow
from app.events import EventHub, TurnEventSink
from app.events import log as event_log


async def _ids(hub: EventHub, conversation_id: str) -> list[int]:
    async with hub.sessions() as s:
        return list(await s.scalars(select(ConversationEvent.id).where(ConversationEvent.conversation_id == conversation_id)
                                    .order_by(ConversationEvent.id)))  # fmt: skip


async def test_a_conversation_keeps_its_newest_events(hub: EventHub, conversation_id: str) -> None:
    ids = await hub.append(conversation_id, "t1", [("turn.emotion", {"i": i}) for i in range(7)])
    assert await event_log.prune_conversation(hub.sessions, conversation_id, keep=3) == 4
    assert await _ids(hub, conversation_id) == ids[-3:]
    assert await event_log.prune_conversation(hub.sessions, conversation_id, keep=3) == 0


async def test_events_older_than_the_retention_are_pruned(hub: EventHub, conversation_id: str) -> None:
    hub._last_prune = time.monotonic()  # no background prune racing the one under test
    old, new = await hub.append(conversation_id, "t1", [("turn.started", {}), ("turn.completed", {})])
    async with hub.sessions() as s, s.begin():
        await s.execute(update(ConversationEvent).where(ConversationEvent.id == old)
                        .values(created_at=utcnow() - timedelta(days=event_log.KEEP_DAYS + 1)))  # fmt: skip
    assert await event_log.prune_old(hub.sessions) == 1
    assert await _ids(hub, conversation_id) == [new]


async def test_ids_keep_growing_after_everything_was_pruned(hub: EventHub, conversation_id: str) -> None:
    (first,) = await hub.append(conversation_id, None, [("turn.started", {})])
    await event_log.prune_conversation(hub.sessions, conversation_id, keep=0)
    sink = TurnEventSink(hub, conversation_id, None)
    assert await sink.emit("turn.started", {}) > first  # an SSE id is never handed out twice
    await sink.close()
    async with hub.sessions() as s:
        assert await s.scalar(select(func.count()).select_from(ConversationEvent)) == 1
