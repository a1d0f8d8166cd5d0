"""Latency and token usage per pipeline stage, from ``turn_stage_metrics``.

Percentiles are nearest-rank (see ``sql.percentiles``) so SQLite and PostgreSQL agree exactly.
Tokens per turn divide a stage's tokens by the turns that ran that stage. The indexes on
(stage, ms, created_at) and (stage, turn_id, created_at) (migration 0006) let both read their
keys in order from the index alone.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import Filters
from analytics.queries.sql import Row, conditions, count_if, percentiles, ratio, scan_key, where
from app.db.models import TurnStageMetric as M


class LatencyRow(Row):
    stage: str
    calls: int
    mean_ms: float | None
    p50_ms: float | None
    p95_ms: float | None
    max_ms: float | None
    errors: int
    fallbacks: int


class UsageRow(Row):
    stage: str
    turns: int
    calls: int
    input_tokens: int
    output_tokens: int
    input_per_turn: float | None
    output_per_turn: float | None
    estimated_share: float | None


def _terms(f: Filters) -> list:
    return conditions(f, created=M.created_at, conversation=M.conversation_id, turn=M.turn_id, agent=M.agent_id)


async def latency(session: AsyncSession, f: Filters) -> list[LatencyRow]:
    terms = _terms(f)
    stage = scan_key(session, M.stage).label("stage")
    stmt = (
        select(
            stage, func.count().label("n"), func.avg(M.ms).label("mean"), func.max(M.ms).label("max"),
            count_if(M.outcome == "error").label("errors"), count_if(M.outcome == "fallback").label("fallbacks"),
        )
        .where(where(terms))
        .group_by(stage)
        .order_by(stage)
    )
    rows = (await session.execute(stmt)).all()
    pct = await percentiles(session, M.ms, M.stage, terms, (50, 95)) if rows else {}
    return [
        LatencyRow(
            stage=r.stage, calls=int(r.n), mean_ms=round(float(r.mean), 3), p50_ms=pct[r.stage][50],
            p95_ms=pct[r.stage][95], max_ms=float(r.max), errors=int(r.errors), fallbacks=int(r.fallbacks),
        )
        for r in rows
    ]


async def usage(session: AsyncSession, f: Filters) -> list[UsageRow]:
    terms = where(_terms(f))
    stage = scan_key(session, M.stage).label("stage")
    sums = (
        select(
            stage, func.count().label("calls"), func.sum(M.input_tokens).label("inp"),
            func.sum(M.output_tokens).label("out"), count_if(M.estimated).label("est"),
        )
        .where(terms)
        .group_by(stage)
        .subquery("sums")
    )
    # Turns per stage as distinct (stage, turn) pairs: grouped in (stage, turn_id) index order
    # rather than a per-stage COUNT(DISTINCT) that sorts every row.
    pairs = select(M.stage, M.turn_id).where(terms).group_by(M.stage, M.turn_id).subquery("pairs")
    turns = select(pairs.c.stage, func.count().label("turns")).group_by(pairs.c.stage).subquery("turns")
    stmt = (
        select(sums.c.stage, turns.c.turns, sums.c.calls, sums.c.inp, sums.c.out, sums.c.est)
        .join(turns, turns.c.stage == sums.c.stage)
        .order_by(sums.c.stage)
    )
    return [
        UsageRow(
            stage=r.stage, turns=int(r.turns), calls=int(r.calls), input_tokens=int(r.inp or 0),
            output_tokens=int(r.out or 0), input_per_turn=ratio(r.inp, r.turns), output_per_turn=ratio(r.out, r.turns),
            estimated_share=ratio(r.est, r.calls),
        )
        for r in await session.execute(stmt)
    ]
