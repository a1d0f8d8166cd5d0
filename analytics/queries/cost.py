"""Cost per turn by orchestration mode (issue 32), from each turn's ``orchestration.cost``.

Per mode (``staged`` | ``combined``; ``unrecorded`` for turns saved before the cost was): turns,
model calls per turn (mean; a cancelled speculative reply counts), calls that had ended before the
first words (mean), input and output tokens per turn (mean), and the share of turns whose cost
includes the late parts (suggestions). Per stage, ``usage`` (``turn_stage_metrics``) has the tokens
of each stage; the report shows both.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import Filters
from analytics.queries.sql import Row, conditions, count_if, where
from app.db.models import Turn

UNRECORDED = "unrecorded"


class TurnCostRow(Row):
    mode: str
    turns: int
    calls_per_turn: float | None
    calls_before_first_token: float | None
    input_tokens_per_turn: float | None
    output_tokens_per_turn: float | None
    late_included_share: float | None


def _cost(*path: str):  # noqa: ANN202 - a JSON element of result.orchestration.cost
    return Turn.result[("orchestration", "cost", *path)]


def _mean(*path: str):  # noqa: ANN202
    return func.avg(_cost(*path).as_float())


async def turn_cost(session: AsyncSession, f: Filters) -> list[TurnCostRow]:
    mode = func.coalesce(_cost("orchestration").as_string(), UNRECORDED).label("mode")
    terms = [Turn.result.is_not(None), *conditions(f, created=Turn.created_at, conversation=Turn.conversation_id,
                                                    turn=Turn.id)]  # fmt: skip
    stmt = (
        select(
            mode, func.count().label("turns"), _mean("modelCalls").label("calls"),
            _mean("callsBeforeFirstToken").label("before"), _mean("inputTokens").label("inp"),
            _mean("outputTokens").label("out"),
            count_if(_cost("includesLate").as_boolean().is_(True)).label("late"),
        )
        .where(where(terms))
        .group_by(mode)
        .order_by(mode)
    )
    rows = (await session.execute(stmt)).all()
    return [
        TurnCostRow(
            mode=r.mode, turns=int(r.turns), calls_per_turn=_round(r.calls), calls_before_first_token=_round(r.before),
            input_tokens_per_turn=_round(r.inp), output_tokens_per_turn=_round(r.out),
            late_included_share=_round(int(r.late) / int(r.turns)) if r.turns else None,
        )
        for r in rows
    ]


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), 3)
