"""Lore use (issue 28): per lore entry, how many replies had it in their prompt (the ``lore`` list of
each agent message's metadata), in how many conversations, and when it was last used — which
entries do work and which never trigger. Entries that exist but were not used in the range are
listed with 0 replies (those of the filtered conversations and agents); an entry used and deleted
since is ``deleted``. Like the other queries it counts what the backend did: replies rewound or
deleted since are counted.
"""

from __future__ import annotations

from sqlalchemy import func, or_, select, true
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import Filters
from analytics.queries.sql import Row, conditions, json_items, where
from app.db.models import LoreEntry, Message


class LoreUseRow(Row):
    entry_id: str
    attached_to: str  # conversation | agent | deleted
    conversation_id: str | None
    agent_id: str | None
    keys: list[str]
    priority: int | None
    enabled: bool | None
    replies: int  # replies whose prompt had it
    conversations: int
    last_used_at: str | None  # ISO 8601, UTC


async def lore_use(session: AsyncSession, f: Filters) -> list[LoreUseRow]:
    items, entry_id = json_items(session, Message.metadata_json, "lore")
    terms = [Message.role == "agent", *conditions(f, created=Message.created_at, conversation=Message.conversation_id,
                                                  turn=Message.turn_id, agent=Message.agent_id)]  # fmt: skip
    used = {
        r.entry_id: r
        for r in await session.execute(
            select(entry_id.label("entry_id"), func.count().label("replies"),
                   func.count(func.distinct(Message.conversation_id)).label("conversations"),
                   func.max(Message.created_at).label("last"))
            .select_from(Message).join(items, true()).where(where(terms)).group_by(entry_id)
        )
    }  # fmt: skip
    holders = []
    if f.conversation_ids:
        holders.append(LoreEntry.conversation_id.in_(f.conversation_ids))
    if f.agent_ids:
        holders.append(LoreEntry.agent_id.in_(f.agent_ids))
    unused_too = or_(*holders) if holders else true()
    entries = {e.id: e for e in await session.scalars(select(LoreEntry).where(or_(LoreEntry.id.in_(list(used)), unused_too)))}
    rows = []
    for entry_id_ in sorted(set(used) | set(entries)):
        e, u = entries.get(entry_id_), used.get(entry_id_)
        last = u.last if u is not None else None
        rows.append(LoreUseRow(
            entry_id=entry_id_, attached_to="deleted" if e is None else ("conversation" if e.conversation_id else "agent"),
            conversation_id=e.conversation_id if e else None, agent_id=e.agent_id if e else None,
            keys=list(e.keys) if e else [], priority=e.priority if e else None, enabled=e.enabled if e else None,
            replies=int(u.replies) if u else 0, conversations=int(u.conversations) if u else 0,
            last_used_at=last.isoformat() if hasattr(last, "isoformat") else (str(last) if last else None),
        ))  # fmt: skip
    rows.sort(key=lambda r: (-r.replies, r.entry_id))
    return rows


__all__ = ["LoreUseRow", "lore_use"]
