"""Selection paths: which path decided each turn, whether the model agreed with the scorer, and
how the replies of each path fared.

Per (``selection_mode``, ``selection_path``) of ``speaker_decisions`` (``unrecorded`` for rows
written before they were recorded): turns and their share of all turns in range; the mean scorer
margin (its last pick minus the best candidate it left out, over turns that had a choice);
``compared``: turns where the model answered *and* the scorer's own pick was computed (both are,
on every turn the model was asked and answered), ``agreed`` of them gave the same speakers, and
their ratio; the routing outcomes: ``speakers`` selected, ``replies_kept`` (primary agent messages
saved in the turn), ``replies_dropped`` (primary replies the checks dropped: distinct agents with
a ``dropped`` quality event), ``kept_rate`` = kept / speakers, ``failed_turns``.
"""

from __future__ import annotations

from sqlalchemy import case, distinct, func, not_, select
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import Filters
from analytics.queries.sql import Row, as_float, count_if, decision_terms, ratio, where
from app.db.models import Message, QualityEvent as QE, SpeakerDecision as SD, Turn

UNRECORDED = "unrecorded"


class SelectionPathRow(Row):
    mode: str
    path: str
    turns: int
    share: float | None
    mean_margin: float | None
    compared: int
    agreed: int
    agreement_rate: float | None
    speakers: int
    replies_kept: int
    replies_dropped: int
    kept_rate: float | None
    failed_turns: int


async def selection_paths(session: AsyncSession, f: Filters) -> list[SelectionPathRow]:
    per_turn = (
        select(
            SD.turn_id.label("turn_id"),
            func.coalesce(func.max(SD.selection_mode), UNRECORDED).label("mode"),
            func.coalesce(func.max(SD.selection_path), UNRECORDED).label("path"),
            func.max(SD.scorer_margin).label("margin"),
            func.max(_flag(SD.llm_agreed)).label("agreed"),
            count_if(SD.selected).label("speakers"),
        )
        .where(where(decision_terms(f, per_turn=True)))
        .group_by(SD.turn_id)
        .subquery("per_turn")
    )
    kept = (
        select(Message.turn_id.label("turn_id"), func.count().label("n"))
        .where(Message.role == "agent", Message.reply_kind == "primary", Message.turn_id.in_(select(per_turn.c.turn_id)))
        .group_by(Message.turn_id)
        .subquery("kept")
    )
    dropped = (
        select(QE.turn_id.label("turn_id"), func.count(distinct(QE.agent_id)).label("n"))
        .where(QE.action == "dropped", QE.reply_kind == "primary", QE.turn_id.in_(select(per_turn.c.turn_id)))
        .group_by(QE.turn_id)
        .subquery("dropped")
    )
    t = per_turn.c
    stmt = (
        select(
            t.mode, t.path, func.count().label("turns"), func.avg(as_float(t.margin)).label("margin"),
            func.count(t.agreed).label("compared"), func.sum(t.agreed).label("agreed"),
            func.sum(t.speakers).label("speakers"), func.sum(func.coalesce(kept.c.n, 0)).label("kept"),
            func.sum(func.coalesce(dropped.c.n, 0)).label("dropped"), count_if(Turn.status == "failed").label("failed"),
        )
        .select_from(per_turn)
        .outerjoin(kept, kept.c.turn_id == t.turn_id)
        .outerjoin(dropped, dropped.c.turn_id == t.turn_id)
        .outerjoin(Turn, Turn.id == t.turn_id)
        .group_by(t.mode, t.path)
        .order_by(t.mode, t.path)
    )  # fmt: skip
    rows = (await session.execute(stmt)).all()
    total = sum(int(r.turns) for r in rows)
    return [
        SelectionPathRow(
            mode=r.mode, path=r.path, turns=int(r.turns), share=ratio(r.turns, total),
            mean_margin=None if r.margin is None else round(float(r.margin), 6), compared=int(r.compared or 0),
            agreed=int(r.agreed or 0), agreement_rate=ratio(r.agreed, r.compared), speakers=int(r.speakers or 0),
            replies_kept=int(r.kept or 0), replies_dropped=int(r.dropped or 0), kept_rate=ratio(r.kept, r.speakers),
            failed_turns=int(r.failed or 0),
        )  # fmt: skip
        for r in rows
    ]


def _flag(column):  # noqa: ANN001, ANN202 - SQL expression: 1 / 0 / NULL for a nullable boolean
    return case((column, 1), (not_(column), 0))


__all__ = ["SelectionPathRow", "selection_paths"]
