"""What the user wants from the group this turn (the seed's ``classifyIntent`` stage)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

IntentKind = Literal[
    "chit_chat", "question", "advice_request", "emotional_share", "address_specific", "address_all", "other",
]


class UserIntent(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """``addressedAgentIds`` lists the agents the user singled out (empty for "everyone");
    ``wantsMultipleVoices`` is true when the user asks for several views or everyone's answer,
    which is one of the seed's reasons to let more than one agent reply."""

    kind: IntentKind
    addressed_agent_ids: list[str]
    wants_multiple_voices: bool
    reason: str = ""


INTENT_REASON_MAX_CHARS = 120


def intent_constraints(member_ids: list[str] | tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Per request: addressed ids are members (an ``enum``), each at most once; a short reason."""
    ids = list(dict.fromkeys(member_ids))
    items: dict[str, Any] = {"enum": ids} if ids else {"maxLength": 0}
    return {
        "addressedAgentIds": {"maxItems": len(ids)},
        "addressedAgentIds[]": items,
        "reason": {"maxLength": INTENT_REASON_MAX_CHARS},
    }


def validate_intent(intent: UserIntent, member_ids: list[str] | set[str]) -> list[str]:
    members = set(member_ids)
    # An address_specific with nobody named is cleaned (to ``other``), not repaired: a repair
    # costs a round trip and a schema-following model may well answer the same again.
    return [f"addressedAgentIds contains unknown agent id {i!r}" for i in intent.addressed_agent_ids if i not in members]


def clean_intent(intent: UserIntent, member_ids: list[str] | set[str]) -> UserIntent:
    """Drop unknown and repeated ids; an address_specific with nobody left becomes other."""
    members = set(member_ids)
    ids = [i for i in dict.fromkeys(intent.addressed_agent_ids) if i in members]
    kind = "other" if intent.kind == "address_specific" and not ids else intent.kind
    return msgspec.structs.replace(intent, addressed_agent_ids=ids, kind=kind)


class IntentInvalid(ValueError):
    def __init__(self, text: str, problems: list[str]) -> None:
        super().__init__("intent output rejected: " + "; ".join(problems))
        self.text = text
        self.problems = problems


def decode_intent(text: str, member_ids: list[str] | set[str]) -> UserIntent:
    """Decode and check; raises ``IntentInvalid`` with the problems to send back on repair."""
    try:
        intent = msgspec.json.decode(text, type=UserIntent)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise IntentInvalid(text, [str(exc)]) from exc
    problems = validate_intent(intent, member_ids)
    if problems:
        raise IntentInvalid(text, problems)
    return clean_intent(intent, member_ids)
