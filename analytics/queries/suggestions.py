"""Suggested replies: how often the generator succeeds first time, needs repair, or falls back.

Definitions (``suggestions`` rows): first-try valid = ready, not a fallback, ``attempts`` = 1;
repaired = ready, not a fallback, more than one attempt; fallback = the conservative fallback
options were used (any status); failed / cleared / generating = that status. Rates are per
generated suggestion set.
"""

from __future__ import annotations

from msgspec.structs import replace
from sqlalchemy import and_, func, not_, select
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import Filters
from analytics.queries.sql import Row, conditions, count_if, ratio, where
from app.db.models import Message, Suggestion as S


class SuggestionRow(Row):
    generated: int
    first_try_valid: int
    repaired: int
    failed: int
    fallback: int
    cleared: int
    generating: int
    first_try_rate: float | None
    repaired_rate: float | None
    failed_rate: float | None
    fallback_rate: float | None
    cleared_rate: float | None


async def suggestions(session: AsyncSession, f: Filters) -> list[SuggestionRow]:
    terms = conditions(replace(f, agent_ids=()), created=S.created_at, conversation=S.conversation_id, turn=S.turn_id)
    if f.agent_ids:  # the agent whose message the suggestions answer
        terms.append(S.anchor_message_id.in_(select(Message.id).where(Message.agent_id.in_(f.agent_ids))))
    ready = and_(S.status == "ready", not_(S.fallback))
    stmt = select(
        func.count().label("n"), count_if(and_(ready, S.attempts == 1)).label("first"),
        count_if(and_(ready, S.attempts > 1)).label("repaired"), count_if(S.status == "failed").label("failed"),
        count_if(S.fallback).label("fallback"), count_if(S.status == "cleared").label("cleared"),
        count_if(S.status == "generating").label("generating"),
    ).where(where(terms))
    r = (await session.execute(stmt)).one()
    n = int(r.n)
    if n == 0:
        return []
    return [
        SuggestionRow(
            generated=n, first_try_valid=int(r.first), repaired=int(r.repaired), failed=int(r.failed),
            fallback=int(r.fallback), cleared=int(r.cleared), generating=int(r.generating),
            first_try_rate=ratio(r.first, n), repaired_rate=ratio(r.repaired, n), failed_rate=ratio(r.failed, n),
            fallback_rate=ratio(r.fallback, n), cleared_rate=ratio(r.cleared, n),
        )
    ]
