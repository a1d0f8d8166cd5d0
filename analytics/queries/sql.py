"""SQL building blocks that behave the same on SQLite and PostgreSQL.

Queries aggregate in the database and return a handful of grouped rows; Python only turns
counts into ratios. Dialect differences live here and nowhere else: the calendar day of a
timestamp (UTC). Nearest-rank percentiles are shared SQL (a running count over a histogram).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
from sqlalchemy import ColumnElement, Float, String, and_, case, cast, func, select, true
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.expression import UnaryExpression
from sqlalchemy.sql.operators import custom_op

from analytics.filters import Filters
from app.db.models import Conversation, SpeakerDecision

_SD = SpeakerDecision.__table__.alias("sd_filter")


class Row(msgspec.Struct, rename="camel", kw_only=True):
    """Base of every query row: camelCase JSON like the rest of the API."""


def dialect(session: AsyncSession) -> str:
    return session.get_bind().dialect.name


def day(session: AsyncSession, column: Any) -> ColumnElement[str]:
    """``YYYY-MM-DD`` in UTC. SQLite stores UTC timestamps as ISO text, so a prefix is exact."""
    if dialect(session) == "postgresql":
        return func.to_char(func.timezone("UTC", column), "YYYY-MM-DD", type_=String)
    return func.substr(column, 1, 10, type_=String)


def json_items(session: AsyncSession, column: Any, key: str) -> tuple[Any, ColumnElement[str]]:
    """The items of the JSON array ``column[key]`` as a table to join (``ON true``), and each
    item's ``id`` as text: ``json_each`` on SQLite, ``jsonb_array_elements`` on PostgreSQL."""
    if dialect(session) == "postgresql":
        items = func.jsonb_array_elements(column[key]).table_valued("value")
        return items, items.c.value.op("->>")("id")
    items = func.json_each(column, f"$.{key}").table_valued("value")
    return items, func.json_extract(items.c.value, "$.id", type_=String)


def scan_key(session: AsyncSession, column: Any) -> ColumnElement[Any]:
    """A GROUP BY key for a few groups over many rows. SQLite would otherwise walk a (key, …)
    index to get the groups in order and look every row up in the table (≈5× slower than a
    scan and a small sort); the unary ``+`` is SQLite's way to keep an index out of a term.
    PostgreSQL hashes the groups anyway and gets the bare column."""
    if dialect(session) == "sqlite":
        return UnaryExpression(column, operator=custom_op("+"), type_=column.type)
    return column


def count_if(condition: Any) -> ColumnElement[int]:
    return func.sum(case((condition, 1), else_=0))


def as_float(value: Any) -> ColumnElement[float]:
    return cast(value, Float)


def ratio(part: float | int | None, whole: float | int | None) -> float | None:
    return None if not whole else round(float(part or 0) / float(whole), 6)


def conditions(
    f: Filters,
    *,
    created: Any,
    conversation: Any,
    turn: Any = None,
    agent: Any = None,
    kind: Any = None,
    decided: Any = None,
) -> list[ColumnElement[bool]]:
    """WHERE terms for one table. Columns the table lacks are reached through
    ``speaker_decisions`` / ``conversations`` sub-selects keyed by turn or conversation."""
    terms: list[ColumnElement[bool]] = []
    if f.since is not None:
        terms.append(created >= f.since)
    if f.until is not None:
        terms.append(created < f.until)
    if f.conversation_ids:
        terms.append(conversation.in_(f.conversation_ids))
    if f.kind is not None:
        if kind is not None:
            terms.append(kind == f.kind)
        else:
            terms.append(conversation.in_(select(Conversation.id).where(Conversation.kind == f.kind)))
    if f.agent_ids:
        if agent is not None:
            terms.append(agent.in_(f.agent_ids))
        else:
            terms.append(turn.in_(select(_SD.c.turn_id).where(_SD.c.agent_id.in_(f.agent_ids))))
    if f.selected_by:
        if decided is not None:
            terms.append(decided.in_(f.selected_by))
        else:
            terms.append(turn.in_(select(_SD.c.turn_id).where(_SD.c.decided_by.in_(f.selected_by))))
    return terms


def decision_terms(f: Filters, *, per_turn: bool = False) -> list[ColumnElement[bool]]:
    """Filters on ``speaker_decisions``. ``per_turn`` keeps whole turns for the agent filter."""
    sd = SpeakerDecision
    return conditions(
        f, created=sd.created_at, conversation=sd.conversation_id, turn=sd.turn_id,
        agent=None if per_turn else sd.agent_id, kind=sd.conversation_kind, decided=sd.decided_by,
    )


def where(terms: Sequence[ColumnElement[bool]]) -> ColumnElement[bool]:
    return and_(true(), *terms)


async def percentiles(
    session: AsyncSession, value: Any, group: Any, terms: Sequence[ColumnElement[bool]], points: Sequence[int]
) -> dict[Any, dict[int, float]]:
    """Nearest-rank percentiles (the value at position k = ceil(p/100 × n)) per group.

    Same SQL on both databases, from a histogram: count rows per (group, value), take the running
    count over the values in order, and the percentile is the smallest value whose running count
    reaches k, i.e. ``cum × 100 ≥ p × n`` (integers, no rounding). This is exactly PostgreSQL's
    ``percentile_disc`` but needs no sort of every row: with an index on (group, value) both
    databases read the pairs in order and the window runs over the distinct values only."""
    hist = (
        select(group.label("g"), value.label("v"), func.count().label("c"))
        .where(where(terms))
        .group_by(group, value)
        .subquery("hist")
    )
    running = select(
        hist.c.g,
        hist.c.v,
        func.sum(hist.c.c).over(partition_by=hist.c.g, order_by=hist.c.v, rows=(None, 0)).label("cum"),
        func.sum(hist.c.c).over(partition_by=hist.c.g).label("n"),
    ).subquery("running")
    cols = [func.min(case((running.c.cum * 100 >= running.c.n * p, running.c.v))).label(f"p{p}") for p in points]
    stmt = select(running.c.g, *cols).group_by(running.c.g)
    result = await session.execute(stmt)
    return {row.g: {p: float(getattr(row, f"p{p}")) for p in points} for row in result}
