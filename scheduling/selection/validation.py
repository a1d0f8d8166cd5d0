"""The LLM selector's answer and the checks it must pass before anyone acts on it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec


class SpeakerSelection(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    selected_agent_ids: list[str]
    reason: str


SELECTION_REASON_MAX_CHARS = 160


def selection_constraints(candidate_ids: Iterable[str], reply_limit: int) -> dict[str, dict[str, Any]]:
    """Per request: only candidates (an ``enum``), one to ``reply_limit`` of them, a short reason.

    A strict server generates exactly what the schema allows, so an unconstrained id list gives
    strings that are no member's id (round 1: the selector was rejected on every turn)."""
    ids = list(dict.fromkeys(candidate_ids))
    return {
        "selectedAgentIds": {"minItems": 1 if ids else 0, "maxItems": max(0, min(reply_limit, len(ids)))},
        "selectedAgentIds[]": {"enum": ids} if ids else {"maxLength": 0},
        "reason": {"maxLength": SELECTION_REASON_MAX_CHARS},
    }


class SelectionRejected(ValueError):
    """The selector's answer cannot be used. Carries the candidates it had to choose from and
    why, so the repair prompt (and the turn's metadata) can say exactly what went wrong."""

    def __init__(self, candidates: list[str], reason: str, *, text: str | None = None) -> None:
        super().__init__(f"speaker selection rejected: {reason} (candidates: {', '.join(candidates)})")
        self.candidates = candidates
        self.reason = reason
        self.text = text


def normalize_selection(selection: SpeakerSelection) -> SpeakerSelection:
    """Drop repeated ids (keeping first order); repeats are harmless, not a reason to retry."""
    ids = list(dict.fromkeys(i.strip() for i in selection.selected_agent_ids))
    return msgspec.structs.replace(selection, selected_agent_ids=ids)


def validate_selection(selection: SpeakerSelection, candidate_ids: Iterable[str], reply_limit: int) -> list[str]:
    """Problems after de-duplication: empty, unknown ids, more than ``reply_limit``."""
    candidates = set(candidate_ids)
    ids = normalize_selection(selection).selected_agent_ids
    problems = []
    if not ids:
        problems.append("selectedAgentIds is empty; choose at least one agent")
    unknown = [i for i in ids if i not in candidates]
    if unknown:
        problems.append("unknown agent id(s): " + ", ".join(unknown) + "; use only the given ids")
    if len(ids) > reply_limit:
        problems.append(f"{len(ids)} agents selected, at most {reply_limit} allowed")
    return problems


def decode_selection(text: str, candidate_ids: Iterable[str], reply_limit: int) -> SpeakerSelection:
    """Decode, check and normalise, or raise ``SelectionRejected`` with every problem."""
    candidates = list(candidate_ids)
    try:
        selection = msgspec.json.decode(text, type=SpeakerSelection)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SelectionRejected(candidates, f"not a valid selection object: {exc}", text=text) from exc
    problems = validate_selection(selection, candidates, reply_limit)
    if problems:
        raise SelectionRejected(candidates, "; ".join(problems), text=text)
    return normalize_selection(selection)
