"""What a turn leaves behind for audit and analytics: one ``speaker_decisions`` row per
candidate, per-stage metrics and quality events (message metadata: ``app/turns/result.py``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import QualityEvent, SpeakerDecision, TurnStageMetric
from app.turns.quality import problem_code
from app.turns.replies import Reply
from app.metrics import record_stage_row
from scheduling import FEATURE_NAMES, GroupSpeakingContext, SelectionDecision, SelectionOutcome, UserEmotion


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
    outcome: SelectionOutcome | None = None,
) -> list[dict[str, Any]]:
    """The scheduling library's decision is the single source of ``decided_by``/``llm_selected``;
    a direct conversation has no selection, so every row says ``direct``. ``outcome`` (the mode,
    the path that decided, the scorer's margin, the model's agreement) is the same on every row of
    the turn, like ``decided_by``."""
    turn_method = "direct" if direct else decision.decided_by
    how = {
        "selection_mode": outcome.mode if outcome else None, "selection_path": outcome.path if outcome else None,
        "scorer_margin": outcome.scorer_margin if outcome else None, "llm_agreed": outcome.llm_agreed if outcome else None,
    }  # fmt: skip
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
            "needs_deescalation": emotion.needs_deescalation, "emotion_source": emotion_source, **how,
        })  # fmt: skip
    return rows


async def write_records(
    session: AsyncSession,
    *,
    decisions: list[dict[str, Any]],
    metrics: list[dict[str, Any]],
    quality: list[dict[str, Any]],
) -> None:
    # Core inserts of the tables (column defaults apply): the ORM's bulk path cost more than the SQL
    if decisions:
        await session.execute(insert(SpeakerDecision.__table__), decisions)
    if metrics:
        await session.execute(insert(TurnStageMetric.__table__), metrics)
        for row in metrics:
            record_stage_row(row)  # Prometheus: stage latency histograms and outcomes
    if quality:
        await session.execute(insert(QualityEvent.__table__), quality)


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

