"""The analytics queries, by the name the CLI and HTTP API use.

Each query is ``async (session, Filters) -> list[Row]``: aggregation runs in the database (SQLite
or PostgreSQL) and only grouped rows come back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import Filters
from analytics.queries.agreement import AgreementRow, llm_agreement
from analytics.queries.controls import ControlRow, message_controls
from analytics.queries.cost import TurnCostRow, turn_cost
from analytics.queries.emotions import EmotionRow, RoutingRow, emotion_routing, emotions
from analytics.queries.lore import LoreUseRow, lore_use
from analytics.queries.models import ReplyModelRow, reply_models
from analytics.queries.paths import SelectionPathRow, selection_paths
from analytics.queries.replies import CrossReplyRow, QualityRow, cross_replies, quality
from analytics.queries.speaking import (
    DominanceRow, SelectedByRow, SpeakingShareRow, selected_by, speaking_dominance, speaking_share,
)
from analytics.queries.sql import Row
from analytics.queries.speculation import SpeculationRow, speculation
from analytics.queries.stages import LatencyRow, UsageRow, latency, usage
from analytics.queries.suggestions import SuggestionRow, suggestions


class Query(msgspec.Struct, frozen=True):
    name: str
    run: Callable[[AsyncSession, Filters], Awaitable[list[Any]]]
    row: type[Row]
    summary: str


QUERIES: dict[str, Query] = {
    q.name: q
    for q in (
        Query("speaking-share", speaking_share, SpeakingShareRow, "per agent: candidate turns, times selected, share"),
        Query("speaking-dominance", speaking_dominance, DominanceRow, "per conversation: dominance index and Gini"),
        Query("selected-by", selected_by, SelectedByRow, "mention / llm / fallback / direct per day"),
        Query("emotions", emotions, EmotionRow, "primary emotion, needs and fallback emotion per day"),
        Query("emotion-routing", emotion_routing, RoutingRow, "selection rate by need x capability and by stage"),
        Query("llm-agreement", llm_agreement, AgreementRow, "scorer vs LLM: top-1 agreement, rank correlation"),
        Query("selection-paths", selection_paths, SelectionPathRow,
              "per selection mode and path: turns, model-scorer agreement, replies kept / dropped"),
        Query("cross-replies", cross_replies, CrossReplyRow, "cross-reply rate per day"),
        Query("quality", quality, QualityRow, "quality failures by reason; regenerated and dropped"),
        Query("latency", latency, LatencyRow, "p50/p95 milliseconds per pipeline stage"),
        Query("usage", usage, UsageRow, "tokens per turn by stage"),
        Query("turn-cost", turn_cost, TurnCostRow, "per orchestration mode: model calls, calls before the first words, tokens per turn"),
        Query("reply-models", reply_models, ReplyModelRow,
              "per model config: replies written and dropped, drop rate, tokens and ms per reply"),
        Query("lore-use", lore_use, LoreUseRow,
              "per lore entry: replies whose prompt had it, conversations, last used; unused entries with 0"),
        Query("suggestions", suggestions, SuggestionRow, "suggestion outcomes: first-try, repaired, failed, ..."),
        Query("speculation", speculation, SpeculationRow, "replies started on the scorer's pick: hits, misses"),
        Query("message-controls", message_controls, ControlRow,
              "per agent and overall: regenerations, swipes (back), rewinds and stops, and their rates per reply"),
    )
}


def columns(row_type: type[Row]) -> tuple[str, ...]:
    return row_type.__struct_fields__


__all__ = ["QUERIES", "Query", "Row", "columns"]
