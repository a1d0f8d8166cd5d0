"""How users feel and whether the right agents answer them.

Per-turn figures read one row per turn: the scorer's rank-1 candidate row (every scored turn
has exactly one), which carries the turn's emotion like every other candidate row.

Emotion routing (the need × capability heat-map) joins each candidate to its agent's
capability *tags* (``agents.capabilities``, 0..1) and counts a capability as present when the
tag is ≥ 0.5. The ``*_match`` features could not fill the matrix: they are need × capability,
so they are zero whenever the user lacks that need. Agents without tags (keyword-derived
capabilities) only appear in the ``all`` column. Needs are the emotion's flags; ``none`` is a
turn with no flag set. A cell is the selection rate of such candidates on such turns.

The decisions are scanned once and pre-aggregated per (agent, relationship stage, need flags);
capability tags are read from the JSON once per agent, not once per decision row.
"""

from __future__ import annotations

from sqlalchemy import and_, case, func, not_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import Filters
from analytics.queries.sql import Row, count_if, day, decision_terms, ratio, where
from app.db.models import Agent, SpeakerDecision as SD

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


def _needs(comfort, advice, deescalation):  # noqa: ANN001, ANN202 - SQL expressions
    """The need dimension: each flag, and ``none`` when no flag is set."""
    return {
        "comfort": comfort,
        "advice": advice,
        "deescalation": deescalation,
        "none": not_(or_(comfort, advice, deescalation)),
    }


def _capability_flags():  # noqa: ANN202 - SQL subquery
    """One row per agent: 1/0 per capability tag (≥ ``STRONG``), read from the JSON once per agent
    rather than once per decision row. Agents without tags get 0 everywhere."""
    return select(
        Agent.id.label("agent_id"),
        *(case((Agent.capabilities[c].as_float() >= STRONG, 1), else_=0).label(f"cap_{c}") for c in CAPABILITIES[:-1]),
    ).subquery("caps")


async def emotion_routing(session: AsyncSession, f: Filters) -> list[RoutingRow]:
    # One scan of the decisions, pre-aggregated to (agent, stage, need flags): a few rows per
    # agent. The need × capability cells and the per-stage rates are sums over those groups.
    grouped = (
        select(
            SD.agent_id, SD.relationship_stage, SD.needs_comfort, SD.needs_advice, SD.needs_deescalation,
            func.count().label("n"), count_if(SD.selected).label("s"),
        )
        .where(where(decision_terms(f)))
        .group_by(SD.agent_id, SD.relationship_stage, SD.needs_comfort, SD.needs_advice, SD.needs_deescalation)
        .subquery("g")
    )
    caps = _capability_flags()
    g = grouped.c
    cols, cells = [], []
    for need, need_cond in _needs(g.needs_comfort, g.needs_advice, g.needs_deescalation).items():
        for cap in CAPABILITIES:
            cond = need_cond if cap == "all" else and_(need_cond, caps.c[f"cap_{cap}"] == 1)
            key = f"{need}__{cap}"
            cols += [
                func.sum(case((cond, g.n), else_=0)).label(f"n_{key}"),
                func.sum(case((cond, g.s), else_=0)).label(f"s_{key}"),
            ]
            cells.append((need, cap, key))
    stmt = (
        select(g.relationship_stage, func.sum(g.n).label("n"), func.sum(g.s).label("s"), *cols)
        .select_from(grouped.outerjoin(caps, caps.c.agent_id == g.agent_id))
        .group_by(g.relationship_stage)
        .order_by(g.relationship_stage)
    )
    stages = (await session.execute(stmt)).all()
    out = []
    for need, cap, key in cells if stages else ():
        n = sum(int(getattr(r, f"n_{key}") or 0) for r in stages)
        s = sum(int(getattr(r, f"s_{key}") or 0) for r in stages)
        out.append(RoutingRow(dimension="need_capability", need=need, capability=cap, stage=None,
                              candidates=n, selected=s, rate=ratio(s, n)))
    for r in stages:
        out.append(RoutingRow(dimension="relationship_stage", need=None, capability=None, stage=r.relationship_stage,
                              candidates=int(r.n), selected=int(r.s or 0), rate=ratio(r.s, r.n)))
    return out
