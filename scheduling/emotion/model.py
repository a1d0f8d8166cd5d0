"""The user's emotion for one turn, exactly the seed's ``GroupChatUserEmotionSchema``."""

from __future__ import annotations

from typing import Literal

import msgspec

PrimaryEmotion = Literal[
    "neutral", "happy", "sad", "anxious", "angry", "lonely",
    "stressed", "confused", "romantic", "playful", "unknown",
]
SocialEnergy = Literal["low", "medium", "high"]

REASON_MAX_CHARS = 400


class UserEmotion(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """Decoded from the model's JSON; ``intensity`` 0..1 and ``reason`` ≤ 400 chars are checked
    by ``validate_emotion`` (not by the type) so an out-of-range answer is clamped and noted
    instead of costing a repair round trip."""

    primary_emotion: PrimaryEmotion
    intensity: float
    needs_comfort: bool
    needs_advice: bool
    needs_deescalation: bool
    social_energy: SocialEnergy
    reason: str


# What the schema allows (the prompt asks for the same): a strict server cannot write more.
# The seed allows up to REASON_MAX_CHARS (and a longer answer in prompt mode is clamped, not
# repaired); one short sentence is what the prompt asks for and keeps a small model's answer fast.
REASON_SCHEMA_CHARS = 160
EMOTION_CONSTRAINTS = {"reason": {"maxLength": REASON_SCHEMA_CHARS}}

NEUTRAL_EMOTION = UserEmotion(
    primary_emotion="neutral", intensity=0.2, needs_comfort=False, needs_advice=False,
    needs_deescalation=False, social_energy="medium", reason="",
)
