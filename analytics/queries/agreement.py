"""Does the scorer agree with the LLM? The evidence for (re)tuning the fallback weights.

Only turns the LLM decided (``llm_selected`` not null). Per turn: top-1 agreement = the
scorer's rank-1 candidate is among the LLM's picks. Rank correlation = Somers' D between the
scorer's ranking and the LLM's pick set, from the Mann-Whitney identity: with k picks among n
candidates ranked 1..n, U = Σ pick ranks − k(k+1)/2 counts (pick, non-pick) pairs the scorer
orders the wrong way, so D = 1 − 2U / (k(n−k)) (1 = scorer ranks every pick above every
non-pick, −1 = the reverse). Turns where the LLM picked none or all carry no ranking signal and
are left out of D. Grouped by weights version so a new weights file can be compared.
"""

from __future__ import annotations

from sqlalchemy import Float, and_, case, cast, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import Filters
from analytics.queries.sql import Row, count_if, decision_terms, ratio, where
from app.db.models import SpeakerDecision as SD


class AgreementRow(Row):
    weights_version: str
    turns: int
    top1_agreement: int
    top1_rate: float | None
    ranked_turns: int
    rank_correlation: float | None
    mean_pick_rank: float | None


async def llm_agreement(session: AsyncSession, f: Filters) -> list[AgreementRow]:
    picked = SD.llm_selected
    per_turn = (
        select(
            func.max(SD.weights_version).label("version"),
            func.count().label("n"),
            count_if(picked).label("k"),
            func.sum(case((picked, SD.rank), else_=0)).label("rank_sum"),
            func.max(case((and_(picked, SD.rank == 1), 1), else_=0)).label("top1"),
        )
        .where(where([SD.llm_selected.is_not(None), *decision_terms(f, per_turn=True)]))
        .group_by(SD.turn_id)
        .subquery()
    )
    t = per_turn.c
    informative = and_(t.k > 0, t.k < t.n)
    u = cast(t.rank_sum, Float) - cast(t.k * (t.k + 1), Float) / 2
    d = 1 - 2 * u / cast(t.k * (t.n - t.k), Float)
    stmt = (
        select(
            t.version, func.count().label("turns"), func.sum(t.top1).label("top1"),
            count_if(informative).label("ranked"), func.sum(case((informative, d))).label("d_sum"),
            func.sum(case((t.k > 0, cast(t.rank_sum, Float) / t.k))).label("pick_rank_sum"),
            count_if(t.k > 0).label("with_picks"),
        )
        .group_by(t.version)
        .order_by(t.version)
    )
    return [
        AgreementRow(
            weights_version=r.version, turns=int(r.turns), top1_agreement=int(r.top1 or 0),
            top1_rate=ratio(r.top1, r.turns), ranked_turns=int(r.ranked or 0),
            rank_correlation=ratio(r.d_sum, r.ranked), mean_pick_rank=ratio(r.pick_rank_sum, r.with_picks),
        )
        for r in await session.execute(stmt)
    ]
