"""The combined answer: intent, emotion and the speaker choice as three separate fields, each
the same Struct its own stage decodes, so each is checked and recorded as that stage would."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from scheduling.emotion.model import EMOTION_CONSTRAINTS, UserEmotion
from scheduling.emotion.needs import settle_needs
from scheduling.emotion.validation import clamp_emotion
from scheduling.intent.model import UserIntent, clean_intent, intent_constraints
from scheduling.selection.validation import SpeakerSelection, selection_constraints, validate_selection


class TurnReading(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    intent: UserIntent
    emotion: UserEmotion
    speakers: SpeakerSelection


def reading_constraints(member_ids: Sequence[str], reply_limit: int) -> dict[str, dict[str, Any]]:
    """Each part's own per-request constraints under its field: the members' ids as ``enum``s."""
    parts = (("intent", intent_constraints(list(member_ids))), ("emotion", EMOTION_CONSTRAINTS),
             ("speakers", selection_constraints(member_ids, reply_limit)))  # fmt: skip
    return {f"{field}.{path}": extra for field, rules in parts for path, extra in rules.items()}


def validate_reading(reading: TurnReading, member_ids: Sequence[str], reply_limit: int) -> list[str]:
    """The speaker choice is checked as the selector's is (a repair round trip when it fails);
    intent and emotion are cleaned and clamped instead, as their stages do (``split_reading``)."""
    return [f"speakers: {p}" for p in validate_selection(reading.speakers, member_ids, reply_limit)]


def split_reading(reading: TurnReading, member_ids: Sequence[str],
                  text: str) -> tuple[UserIntent, UserEmotion, SpeakerSelection]:  # fmt: skip
    """``text``: the user's message, for needs that say nothing (``settle_needs``)."""
    return (clean_intent(reading.intent, list(member_ids)), settle_needs(clamp_emotion(reading.emotion), text),
            reading.speakers)
