"""``companion analytics export decisions``: one CSV row per candidate per turn.

The column list is the contract of the tuning tools (``analytics.tuning.dataset``). Rows are
streamed from a server-side cursor in batches, so a year of decisions never sits in memory.
Booleans are ``1``/``0``; ``selected_by`` is empty when the agent was not selected;
``llm_selected`` is empty when the LLM did not decide the turn; times are ISO 8601 UTC.
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from typing import TextIO

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import Filters
from analytics.queries.sql import decision_terms, where
from app.db.models import SpeakerDecision as SD

DECISION_COLUMNS = (
    "turn_id", "conversation_id", "agent_id", "created_at", "selected", "selected_by", "rank", "score",
    "weights_version", "relationship_score", "freshness_score", "recent_reply_count", "spoke_last_turn",
    "comfort_match", "advice_match", "deescalation_match", "playful_match", "mentioned", "primary_emotion",
    "intensity", "llm_selected",
)
BATCH = 5000


def _cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, datetime):
        stamp = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return stamp.isoformat().replace("+00:00", "Z")
    return value


async def export_decisions(session: AsyncSession, f: Filters, out: TextIO) -> int:
    """Write the header and every matching row (whole turns: the agent filter keeps turns in
    which the agent was a candidate); return the number of data rows."""
    stmt = (
        select(*(getattr(SD, c) for c in DECISION_COLUMNS))
        .where(where(decision_terms(f, per_turn=True)))
        .order_by(SD.created_at, SD.turn_id, SD.rank)
        .execution_options(yield_per=BATCH)
    )
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(DECISION_COLUMNS)
    count = 0
    result = await session.stream(stmt)
    async for batch in result.partitions(BATCH):
        writer.writerows([[_cell(v) for v in row] for row in batch])
        count += len(batch)
    return count
