"""Deterministic fallback scorer and the rule for how many agents reply.

Score = Σ weight × feature over ``FEATURE_NAMES``. Every candidate is scored on every turn,
whoever ends up deciding, so analytics can compare the LLM's choice with the scorer's. Equal
scores (compared at 1e-9) break by display order, then id: the seed's ``a.displayOrder -
b.displayOrder``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import msgspec

from scheduling.context import GroupSpeakingContext
from scheduling.emotion.model import UserEmotion
from scheduling.intent.model import UserIntent
from scheduling.profiles import AgentProfile
from scheduling.selection.features import FEATURE_NAMES, candidate_features
from scheduling.selection.weights import ScoringWeights

Chattiness = Literal["quiet", "balanced", "lively"]
SelectedBy = Literal["mention", "llm", "fallback", "direct", "order"]
RELAY_INTENSITY = 0.8


class CandidateScore(msgspec.Struct, rename="camel"):
    agent_id: str
    features: dict[str, float]
    score: float
    rank: int
    selected: bool = False
    selected_by: SelectedBy | None = None
    llm_selected: bool | None = None  # None: no usable LLM selection this turn


def weighted_score(features: dict[str, float], weights: ScoringWeights) -> float:
    return round(sum(weights.weights.get(name, 0.0) * features[name] for name in FEATURE_NAMES), 9)


def score_candidates(
    agents: Sequence[AgentProfile],
    context: GroupSpeakingContext,
    mentions: Sequence[str],
    weights: ScoringWeights,
    emotion: UserEmotion | None = None,
) -> list[CandidateScore]:
    """All candidates, best first, ``rank`` 1-based. ``emotion`` defaults to the context's."""
    emotion = emotion or context.user_emotion
    mentioned = set(mentions)
    scored = []
    for agent in agents:
        features = candidate_features(agent, context.for_agent(agent.id), emotion, mentioned=agent.id in mentioned)
        scored.append((agent, features, weighted_score(features, weights)))
    scored.sort(key=lambda item: (-item[2], item[0].display_order, item[0].id))
    return [CandidateScore(agent_id=a.id, features=f, score=s, rank=i + 1) for i, (a, f, s) in enumerate(scored)]


def is_addressed_to_several(intent: UserIntent, mention_count: int) -> bool:
    """The user explicitly wants more than one voice: everyone, several views, several names."""
    return intent.kind == "address_all" or intent.wants_multiple_voices or mention_count > 1


def plan_reply_count(
    intent: UserIntent,
    emotion: UserEmotion,
    *,
    mention_count: int,
    reply_limit: int,
    candidate_count: int,
    chattiness: Chattiness = "balanced",
) -> int:
    """How many agents reply this turn.

    - balanced: 1; up to ``reply_limit`` when the user addresses several (see
      ``is_addressed_to_several``) or the emotion needs a relay (intensity ≥ 0.8 and
      needsComfort).
    - quiet: 1 unless addressed to several (no relay for emotion alone).
    - lively: one more than balanced, still within ``reply_limit``.

    Never fewer than the number of mentioned agents, never more than ``reply_limit`` or the
    number of candidates, never fewer than 1 (when there is a candidate).
    """
    limit = max(1, reply_limit)
    addressed = is_addressed_to_several(intent, mention_count)
    relay = emotion.intensity >= RELAY_INTENSITY and emotion.needs_comfort
    count = limit if addressed or relay else 1
    if chattiness == "quiet" and not addressed:
        count = 1
    elif chattiness == "lively":
        count += 1
    count = max(count, mention_count)
    return max(0, min(count, limit, candidate_count)) if candidate_count else 0
