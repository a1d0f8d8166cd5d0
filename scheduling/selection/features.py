"""The fallback scorer's features, one dict per candidate, with names analytics relies on.

Need × capability features: the user's need is 1.0 when the emotion says so (``needsComfort``,
``needsAdvice``, ``needsDeescalation``), which with a keyword match (capability 1.0) gives
exactly the seed's bonuses. Playful need has no flag in the seed's schema: it is 1.0 for a
playful user, 0.5 for a happy or high-social-energy one, and 0 whenever the user needs comfort
or de-escalation (jokes are not what an upset user needs).

One refinement of the seed: its fallback marks an angry user as needing comfort *and*
de-escalation, and with both at full strength a gentle agent (2.4) would outrank a calm,
bounded one (2.2), against the seed's own principle "用户情绪激烈时，优先选择边界感强、克制、
能降温的 Agent". So while de-escalation is needed, the comfort need counts half.
"""

from __future__ import annotations

from scheduling.context import AgentSpeakingContext
from scheduling.emotion.model import UserEmotion
from scheduling.profiles import AgentProfile
from scheduling.relationship import STAGE_SCORES
from scheduling.selection.capabilities import agent_capabilities

FEATURE_NAMES: tuple[str, ...] = (
    "relationship_score",
    "freshness_score",
    "recent_reply_count",
    "spoke_last_turn",
    "comfort_match",
    "advice_match",
    "deescalation_match",
    "playful_match",
    "mentioned",
)


def user_needs(emotion: UserEmotion) -> dict[str, float]:
    calm_needed = emotion.needs_comfort or emotion.needs_deescalation
    if emotion.primary_emotion == "playful":
        playful = 1.0
    elif emotion.primary_emotion == "happy" or emotion.social_energy == "high":
        playful = 0.5
    else:
        playful = 0.0
    return {
        "comfort": (0.5 if emotion.needs_deescalation else 1.0) if emotion.needs_comfort else 0.0,
        "analysis": 1.0 if emotion.needs_advice else 0.0,
        "deescalation": 1.0 if emotion.needs_deescalation else 0.0,
        "playful": 0.0 if calm_needed else playful,
    }


def candidate_features(
    agent: AgentProfile, context: AgentSpeakingContext | None, emotion: UserEmotion, *, mentioned: bool,
) -> dict[str, float]:
    """Features in ``FEATURE_NAMES`` order. Without a context the agent counts as a silent
    new connection."""
    needs = user_needs(emotion)
    caps = agent_capabilities(agent)
    return {
        "relationship_score": context.relationship_score if context else STAGE_SCORES["new_connection"],
        "freshness_score": context.freshness_score if context else 1.0,
        "recent_reply_count": float(context.recent_reply_count) if context else 0.0,
        "spoke_last_turn": 1.0 if context is not None and context.last_spoke_turns_ago == 0 else 0.0,
        "comfort_match": needs["comfort"] * caps["comfort"],
        "advice_match": needs["analysis"] * caps["analysis"],
        "deescalation_match": needs["deescalation"] * caps["deescalation"],
        "playful_match": needs["playful"] * caps["playful"],
        "mentioned": 1.0 if mentioned else 0.0,
    }
