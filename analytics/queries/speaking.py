"""Who speaks: per-agent share, per-conversation dominance, and how speakers were chosen.

``selection_rate`` is selected / candidate turns (how often an agent that could speak did);
``share`` is the agent's part of all selections in the filtered range (its share of voice).
Dominance is a conversation's largest share; Gini is the inequality of its members' shares
(0 = everyone equal, (n-1)/n = one agent speaks every time), from the sorted-share formula
G = 2·Σ i·x_(i) / (n·Σx) − (n+1)/n with the ranks taken by a window function.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import Filters
from analytics.queries.sql import Row, count_if, day, decision_terms, ratio, where
from app.db.models import Agent, SpeakerDecision as SD


class SpeakingShareRow(Row):
    agent_id: str
    agent_name: str | None
    candidate_turns: int
    selected: int
    selection_rate: float | None
    share: float | None


class DominanceRow(Row):
    conversation_id: str
    agents: int
    selections: int
    dominance: float | None
    gini: float | None


class SelectedByRow(Row):
    day: str
    selected_by: str
    count: int
    share: float | None


async def speaking_share(session: AsyncSession, f: Filters) -> list[SpeakingShareRow]:
    per = (
        select(SD.agent_id, func.count().label("candidates"), count_if(SD.selected).label("selected"))
        .where(where(decision_terms(f)))
        .group_by(SD.agent_id)
        .subquery()
    )
    stmt = select(per, Agent.name).outerjoin(Agent, Agent.id == per.c.agent_id).order_by(per.c.agent_id)
    rows = (await session.execute(stmt)).all()
    total = sum(int(r.selected or 0) for r in rows)
    return [
        SpeakingShareRow(
            agent_id=r.agent_id, agent_name=r.name, candidate_turns=int(r.candidates), selected=int(r.selected or 0),
            selection_rate=ratio(r.selected, r.candidates), share=ratio(r.selected, total),
        )
        for r in rows
    ]


async def speaking_dominance(session: AsyncSession, f: Filters) -> list[DominanceRow]:
    per = (
        select(SD.conversation_id.label("c"), SD.agent_id, count_if(SD.selected).label("s"))
        .where(where(decision_terms(f)))
        .group_by(SD.conversation_id, SD.agent_id)
        .subquery()
    )
    ranked = select(
        per.c.c, per.c.s,
        func.row_number().over(partition_by=per.c.c, order_by=per.c.s).label("i"),
    ).subquery()
    stmt = (
        select(
            ranked.c.c, func.count().label("n"), func.sum(ranked.c.s).label("total"),
            func.max(ranked.c.s).label("top"), func.sum(ranked.c.i * ranked.c.s).label("weighted"),
        )
        .group_by(ranked.c.c)
        .order_by(func.sum(ranked.c.s).desc(), ranked.c.c)
    )
    out = []
    for r in await session.execute(stmt):
        n, total = int(r.n), int(r.total or 0)
        gini = round(2 * float(r.weighted) / (n * total) - (n + 1) / n, 6) if total else None
        out.append(DominanceRow(conversation_id=r.c, agents=n, selections=total, dominance=ratio(r.top, total), gini=gini))
    return out


async def selected_by(session: AsyncSession, f: Filters) -> list[SelectedByRow]:
    d = day(session, SD.created_at).label("day")
    how = func.coalesce(SD.selected_by, "unknown").label("how")
    stmt = (
        select(d, how, func.count().label("n"))
        .where(where([SD.selected, *decision_terms(f)]))
        .group_by(d, how)
        .order_by(d, how)
    )
    rows = (await session.execute(stmt)).all()
    per_day: dict[str, int] = {}
    for r in rows:
        per_day[r.day] = per_day.get(r.day, 0) + int(r.n)
    return [SelectedByRow(day=r.day, selected_by=r.how, count=int(r.n), share=ratio(r.n, per_day[r.day])) for r in rows]
