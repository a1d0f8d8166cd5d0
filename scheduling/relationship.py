"""Relationship stage from the depth of the user's one-on-one chat with an agent.

The seed's first-round heuristic: the direct conversation's message count alone decides the
stage (≥80 close_bond, ≥30 trusted, ≥8 warming_up, else new_connection) and each stage has a
fixed familiarity score. The last interaction time is carried along for prompts and analytics;
it does not change the stage yet (the seed leaves decay for a later relationship system).
"""

from __future__ import annotations

from typing import Literal

import msgspec

RelationshipStage = Literal["new_connection", "warming_up", "trusted", "close_bond"]

STAGE_THRESHOLDS: tuple[tuple[int, RelationshipStage], ...] = (
    (80, "close_bond"),
    (30, "trusted"),
    (8, "warming_up"),
)
STAGE_SCORES: dict[RelationshipStage, float] = {
    "close_bond": 0.95,
    "trusted": 0.78,
    "warming_up": 0.52,
    "new_connection": 0.25,
}


class Relationship(msgspec.Struct, frozen=True, rename="camel"):
    stage: RelationshipStage
    score: float
    conversation_message_count: int
    conversation_last_message_at_ms: int | None = None


def stage_for_message_count(message_count: int) -> RelationshipStage:
    for threshold, stage in STAGE_THRESHOLDS:
        if message_count >= threshold:
            return stage
    return "new_connection"


def relationship_score(stage: RelationshipStage) -> float:
    return STAGE_SCORES[stage]


def relationship_from_direct_chat(message_count: int, last_message_at_ms: int | None = None) -> Relationship:
    count = max(0, int(message_count))
    stage = stage_for_message_count(count)
    return Relationship(
        stage=stage,
        score=STAGE_SCORES[stage],
        conversation_message_count=count,
        conversation_last_message_at_ms=last_message_at_ms,
    )
