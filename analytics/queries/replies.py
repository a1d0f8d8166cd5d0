"""Cross replies and the quality check: does the group talk among itself, and what gets dropped.

Cross-reply rate = cross replies / primary replies among agent messages. Quality failures are
``quality_events`` rows (regenerated once, or dropped with their reason); their rate is per
agent reply in the same range, so a reason's rate is "failures of this kind per reply".
"""

from __future__ import annotations

from sqlalchemy import case, distinct, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import Filters
from analytics.queries.sql import Row, conditions, count_if, day, ratio, where
from app.db.models import Message, QualityEvent as QE


class CrossReplyRow(Row):
    day: str
    turns: int
    primary_replies: int
    cross_replies: int
    cross_rate: float | None
    turns_with_cross: int


class QualityRow(Row):
    reason: str
    reply_kind: str
    regenerated: int
    dropped: int
    total: int
    replies: int
    rate: float | None


def _message_terms(f: Filters) -> list:
    return [Message.role == "agent", *conditions(
        f, created=Message.created_at, conversation=Message.conversation_id, turn=Message.turn_id, agent=Message.agent_id,
    )]


async def cross_replies(session: AsyncSession, f: Filters) -> list[CrossReplyRow]:
    d = day(session, Message.created_at).label("day")
    is_cross = Message.reply_kind == "cross"
    stmt = (
        select(
            d, func.count(distinct(Message.turn_id)).label("turns"), func.count().label("replies"),
            count_if(is_cross).label("cross"),
            func.count(distinct(_cross_turn_id())).label("cross_turns"),
        )
        .where(where(_message_terms(f)))
        .group_by(d)
        .order_by(d)
    )
    out = []
    for r in await session.execute(stmt):
        cross = int(r.cross or 0)
        primary = int(r.replies) - cross
        out.append(CrossReplyRow(day=r.day, turns=int(r.turns), primary_replies=primary, cross_replies=cross,
                                 cross_rate=ratio(cross, primary), turns_with_cross=int(r.cross_turns)))
    return out


def _cross_turn_id():  # noqa: ANN202 - SQL expression
    return case((Message.reply_kind == "cross", Message.turn_id))


async def quality(session: AsyncSession, f: Filters) -> list[QualityRow]:
    replies = (await session.execute(select(func.count()).where(where(_message_terms(f))))).scalar_one()
    terms = conditions(f, created=QE.created_at, conversation=QE.conversation_id, turn=QE.turn_id, agent=QE.agent_id)
    stmt = (
        select(
            QE.reason, QE.reply_kind, count_if(QE.action == "regenerated").label("regen"),
            count_if(QE.action == "dropped").label("dropped"), func.count().label("total"),
        )
        .where(where(terms))
        .group_by(QE.reason, QE.reply_kind)
        .order_by(func.count().desc(), QE.reason, QE.reply_kind)
    )
    return [
        QualityRow(reason=r.reason, reply_kind=r.reply_kind, regenerated=int(r.regen), dropped=int(r.dropped),
                   total=int(r.total), replies=int(replies), rate=ratio(r.total, replies))
        for r in await session.execute(stmt)
    ]
