"""How users feel and whether the right agents answer them.

Per-turn figures read one row per turn: the scorer's rank-1 candidate row (every scored turn
has exactly one), which carries the turn's emotion like every other candidate row.

Emotion routing (the need × capability heat-map) joins each candidate to its agent's
capability *tags* (``agents.capabilities``, 0..1) and counts a capability as present when the
tag is ≥ 0.5. The ``*_match`` features could not fill the matrix: they are need × capability,
so they are zero whenever the user lacks that need. Agents without tags (keyword-derived
capabilities) only appear in the ``all`` column. Needs are the emotion's flags; ``none`` is a
turn with no flag set. A cell is the selection rate of such candidates on such turns.
"""

from __future__ import annotations

from sqlalchemy import and_, func, not_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import Filters
from analytics.queries.sql import Row, count_if, day, decision_terms, ratio, where
from app.db.models import Agent, SpeakerDecision as SD

NEEDS = {
    "comfort": SD.needs_comfort,
    "advice": SD.needs_advice,
    "deescalation": SD.needs_deescalation,
    "none": not_(or_(SD.needs_comfort, SD.needs_advice, SD.needs_deescalation)),
}
CAPABILITIES = ("comfort", "analysis", "deescalation", "playful", "all")
STRONG = 0.5


class EmotionRow(Row):
    day: str
    primary_emotion: str
    turns: int
    share: float | None
    needs_comfort: int
    needs_advice: int
    needs_deescalation: int
    from_fallback: int


class RoutingRow(Row):
    dimension: str  # need_capability | relationship_stage
    need: str | None
    capability: str | None
    stage: str | None
    candidates: int
    selected: int
    rate: float | None


async def emotions(session: AsyncSession, f: Filters) -> list[EmotionRow]:
    d = day(session, SD.created_at).label("day")
    stmt = (
        select(
            d, SD.primary_emotion, func.count().label("turns"),
            count_if(SD.needs_comfort).label("comfort"), count_if(SD.needs_advice).label("advice"),
            count_if(SD.needs_deescalation).label("deesc"), count_if(SD.emotion_source == "fallback").label("fb"),
        )
        .where(where([SD.rank == 1, *decision_terms(f, per_turn=True)]))
        .group_by(d, SD.primary_emotion)
        .order_by(d, SD.primary_emotion)
    )
    rows = (await session.execute(stmt)).all()
    per_day: dict[str, int] = {}
    for r in rows:
        per_day[r.day] = per_day.get(r.day, 0) + int(r.turns)
    return [
        EmotionRow(
            day=r.day, primary_emotion=r.primary_emotion, turns=int(r.turns), share=ratio(r.turns, per_day[r.day]),
            needs_comfort=int(r.comfort), needs_advice=int(r.advice), needs_deescalation=int(r.deesc),
            from_fallback=int(r.fb),
        )
        for r in rows
    ]


def _capability_present(name: str):  # noqa: ANN202 - SQL expression
    if name == "all":
        return None
    return Agent.capabilities[name].as_float() >= STRONG


async def emotion_routing(session: AsyncSession, f: Filters) -> list[RoutingRow]:
    cols, cells = [], []
    for need, need_cond in NEEDS.items():
        for cap in CAPABILITIES:
            present = _capability_present(cap)
            cond = need_cond if present is None else and_(need_cond, present)
            key = f"{need}__{cap}"
            cols += [count_if(cond).label(f"n_{key}"), count_if(and_(cond, SD.selected)).label(f"s_{key}")]
            cells.append((need, cap, key))
    terms = where(decision_terms(f))
    stmt = select(*cols).select_from(SD).outerjoin(Agent, Agent.id == SD.agent_id).where(terms)
    totals = (await session.execute(stmt)).one()
    out = []
    for need, cap, key in cells if any(totals) else ():
        n, s = int(getattr(totals, f"n_{key}") or 0), int(getattr(totals, f"s_{key}") or 0)
        out.append(RoutingRow(dimension="need_capability", need=need, capability=cap, stage=None,
                              candidates=n, selected=s, rate=ratio(s, n)))
    by_stage = (
        select(SD.relationship_stage, func.count().label("n"), count_if(SD.selected).label("s"))
        .where(terms).group_by(SD.relationship_stage).order_by(SD.relationship_stage)
    )
    for r in await session.execute(by_stage):
        out.append(RoutingRow(dimension="relationship_stage", need=None, capability=None, stage=r.relationship_stage,
                              candidates=int(r.n), selected=int(r.s), rate=ratio(r.s, r.n)))
    return out
