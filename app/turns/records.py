"""What a turn leaves behind for audit and analytics: per-message metadata (the seed's keys),
one ``speaker_decisions`` row per candidate, per-stage metrics and quality events."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import QualityEvent, SpeakerDecision, TurnStageMetric
from app.llm.port import Usage
from app.turns.quality import problem_code
from app.turns.replies import Reply
from scheduling import FEATURE_NAMES, GroupSpeakingContext, SelectionDecision, UserEmotion

PIPELINE_VERSION = "langgraph_v1"
SOURCE = "group_chat_agent"


def usage_dict(usage: Usage) -> dict[str, Any]:
    return {"inputTokens": usage.input_tokens, "outputTokens": usage.output_tokens, "estimated": usage.estimated}


def message_metadata(
    reply: Reply,
    *,
    selected_by: str,
    wire_api: str,
    orchestration: dict[str, Any],
    timings: dict[str, float],
) -> dict[str, Any]:
    return {
        "source": SOURCE,
        "selectedBy": selected_by,
        "pipelineVersion": PIPELINE_VERSION,
        "model": reply.model,
        "wireApi": wire_api,
        "replyKind": reply.kind,
        "respondToAgentId": reply.respond_to_agent_id,
        "crossReplyReason": reply.cross_reason,
        "crossReplyRound": reply.cross_round,
        "orchestration": orchestration,
        "timings": {**timings, "reply": round(reply.ms, 3)},
        "usage": usage_dict(reply.usage),
        "attempts": reply.attempts,
    }


def decision_rows(
    *,
    turn_id: str,
    conversation_id: str,
    kind: str,
    decision: SelectionDecision,
    context: GroupSpeakingContext,
    emotion: UserEmotion,
    emotion_source: str,
    display_order: dict[str, int],
    direct: bool,
) -> list[dict[str, Any]]:
    """The scheduling library's decision is the single source of ``decided_by``/``llm_selected``;
    a direct conversation has no selection, so every row says ``direct``."""
    turn_method = "direct" if direct else decision.decided_by
    rows = []
    for candidate in decision.candidates:
        agent_ctx = context.for_agent(candidate.agent_id)
        selected_by = ("direct" if direct else candidate.selected_by) if candidate.selected else None
        rows.append({
            "turn_id": turn_id, "conversation_id": conversation_id, "conversation_kind": kind,
            "agent_id": candidate.agent_id, "display_order": display_order.get(candidate.agent_id, 0),
            "selected": candidate.selected or direct, "selected_by": selected_by, "decided_by": turn_method,
            "rank": candidate.rank, "score": candidate.score, "weights_version": decision.weights_version,
            **{name: float(candidate.features[name]) for name in FEATURE_NAMES},
            "relationship_stage": agent_ctx.relationship_stage if agent_ctx else "new_connection",
            "llm_selected": None if direct else candidate.llm_selected,
            "primary_emotion": emotion.primary_emotion, "intensity": emotion.intensity,
            "needs_comfort": emotion.needs_comfort, "needs_advice": emotion.needs_advice,
            "needs_deescalation": emotion.needs_deescalation, "emotion_source": emotion_source,
        })  # fmt: skip
    return rows


async def write_records(
    session: AsyncSession,
    *,
    decisions: list[dict[str, Any]],
    metrics: list[dict[str, Any]],
    quality: list[dict[str, Any]],
) -> None:
    if decisions:
        await session.execute(insert(SpeakerDecision), decisions)
    if metrics:
        await session.execute(insert(TurnStageMetric), metrics)
    if quality:
        await session.execute(insert(QualityEvent), quality)


def quality_rows(turn_id: str, conversation_id: str, replies: list[Reply]) -> list[dict[str, Any]]:
    rows = []
    for reply in replies:
        base = {"turn_id": turn_id, "conversation_id": conversation_id, "agent_id": reply.agent_id, "reply_kind": reply.kind}
        for problem in reply.regenerated_for:
            rows.append({**base, "reason": problem_code(problem), "action": "regenerated"})
        if reply.dropped:
            for problem in reply.problems:
                rows.append({**base, "reason": problem_code(problem), "action": "dropped"})
    return rows

