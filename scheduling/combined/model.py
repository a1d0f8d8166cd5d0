"""The combined answer: intent, emotion and the speaker choice as three separate fields, each
the same Struct its own stage decodes, so each is checked and recorded as that stage would; and
the cross reply planned up front (``crossReply``: who briefly answers whose reply, or null), so a
combined turn needs no plan call after its replies when the plan fits them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from scheduling.emotion.model import EMOTION_CONSTRAINTS, UserEmotion
from scheduling.emotion.needs import settle_needs
from scheduling.emotion.validation import clamp_emotion
from scheduling.intent.model import UserIntent, clean_intent, intent_constraints
from scheduling.selection.validation import SpeakerSelection, selection_constraints, validate_selection


CROSS_REASON_MAX_CHARS = 120


class FollowUp(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """After the replies: ``from_agent_id`` briefly answers ``to_agent_id``'s reply."""

    from_agent_id: str
    to_agent_id: str
    reason: str


class TurnReading(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    intent: UserIntent
    emotion: UserEmotion
    speakers: SpeakerSelection
    cross_reply: FollowUp | None


def reading_constraints(member_ids: Sequence[str], reply_limit: int) -> dict[str, dict[str, Any]]:
    """Each part's own per-request constraints under its field: the members' ids as ``enum``s."""
    parts = (("intent", intent_constraints(list(member_ids))), ("emotion", EMOTION_CONSTRAINTS),
             ("speakers", selection_constraints(member_ids, reply_limit)))  # fmt: skip
    ids = list(dict.fromkeys(member_ids))
    follow_up = {"fromAgentId": {"enum": ids}, "toAgentId": {"enum": ids}, "reason": {"maxLength": CROSS_REASON_MAX_CHARS}}
    parts += (("crossReply", follow_up),)
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


def planned_follow_up(reading: TurnReading, member_ids: Sequence[str]) -> FollowUp | None:
    """The up-front cross reply, if it names two different members (else none: a plan that cannot
    be used is no reason for a repair round trip)."""
    pair = reading.cross_reply
    if pair is None or pair.from_agent_id == pair.to_agent_id:
        return None
    return pair if {pair.from_agent_id, pair.to_agent_id} <= set(member_ids) else None
