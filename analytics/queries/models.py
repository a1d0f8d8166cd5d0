"""Replies per model config (issue 28: a model per member), from the ``actor`` rows of
``turn_stage_metrics``: how many replies each model wrote, how many it had dropped (no usable
text after the regeneration), the drop rate, and its tokens and time per reply — what an
engineer choosing a member's model compares. Rows saved before the column (migration 0014) are
``unrecorded``.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import Filters
from analytics.queries.sql import Row, conditions, count_if, ratio, where
from app.db.models import TurnStageMetric as M

UNRECORDED = "unrecorded"


class ReplyModelRow(Row):
    model_config_id: str
    replies: int  # attempted: saved plus dropped
    dropped: int
    drop_rate: float | None
    input_tokens: int
    output_tokens: int
    input_per_reply: float | None
    output_per_reply: float | None
    mean_ms: float | None


async def reply_models(session: AsyncSession, f: Filters) -> list[ReplyModelRow]:
    model = func.coalesce(M.model_config_id, UNRECORDED).label("model")
    terms = [M.stage == "actor", *conditions(f, created=M.created_at, conversation=M.conversation_id, turn=M.turn_id,
                                              agent=M.agent_id)]  # fmt: skip
    stmt = (
        select(
            model, func.count().label("n"), count_if(M.outcome == "error").label("dropped"),
            func.sum(M.input_tokens).label("inp"), func.sum(M.output_tokens).label("out"), func.avg(M.ms).label("ms"),
        )
        .where(where(terms))
        .group_by(model)
        .order_by(model)
    )
    return [
        ReplyModelRow(
            model_config_id=r.model, replies=int(r.n), dropped=int(r.dropped or 0), drop_rate=ratio(r.dropped, r.n),
            input_tokens=int(r.inp or 0), output_tokens=int(r.out or 0), input_per_reply=ratio(r.inp, r.n),
            output_per_reply=ratio(r.out, r.n), mean_ms=None if r.ms is None else round(float(r.ms), 3),
        )
        for r in (await session.execute(stmt)).all()
    ]
