"""Speculation: how often the reply started on the fallback scorer's pick (while the LLM
selector was still deciding) was kept.

Per day, over primary agent replies: ``hit`` (speculated and confirmed: the user saw the words
one selector call earlier), ``miss`` (the turn speculated on someone else, who was cancelled;
this reply started after the selection), ``none`` (no speculation: a mention, a direct
conversation, or no selector call). The hit rate is hits / (hits + misses).
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import Filters
from analytics.queries.sql import Row, conditions, count_if, day, ratio, where
from app.db.models import Message


class SpeculationRow(Row):
    day: str
    replies: int
    hits: int
    misses: int
    none: int
    hit_rate: float | None


async def speculation(session: AsyncSession, f: Filters) -> list[SpeculationRow]:
    d = day(session, Message.created_at).label("day")
    spec = Message.metadata_json["speculation"].as_string()
    terms = [Message.role == "agent", Message.reply_kind == "primary", *conditions(
        f, created=Message.created_at, conversation=Message.conversation_id, turn=Message.turn_id, agent=Message.agent_id,
    )]  # fmt: skip
    stmt = (
        select(d, func.count().label("replies"), count_if(spec == "hit").label("hits"),
               count_if(spec == "miss").label("misses"))
        .where(where(terms))
        .group_by(d)
        .order_by(d)
    )  # fmt: skip
    out = []
    for r in await session.execute(stmt):
        hits, misses, replies = int(r.hits or 0), int(r.misses or 0), int(r.replies)
        out.append(SpeculationRow(day=r.day, replies=replies, hits=hits, misses=misses, none=replies - hits - misses,
                                  hit_rate=ratio(hits, hits + misses)))  # fmt: skip
    return out


__all__ = ["SpeculationRow", "speculation"]
