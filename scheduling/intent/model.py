"""What the user wants from the group this turn (the seed's ``classifyIntent`` stage)."""

from __future__ import annotations

from typing import Literal

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


def validate_intent(intent: UserIntent, member_ids: list[str] | set[str]) -> list[str]:
    members = set(member_ids)
    problems = [f"addressedAgentIds contains unknown agent id {i!r}" for i in intent.addressed_agent_ids if i not in members]
    if intent.kind == "address_specific" and not intent.addressed_agent_ids:
        problems.append("kind address_specific needs at least one addressedAgentIds entry")
    return problems


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
