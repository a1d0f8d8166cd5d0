"""What the generator is given and what the model must return.

The app fills ``SuggestionInput`` from the database (saved anchor text, trusted language from
the conversation settings, the anchor turn's metadata); the library trusts none of it to be
already trimmed to the window and applies the anchoring rules itself (see ``prompt``).
"""

from __future__ import annotations

from typing import Any

import msgspec


class Anchor(msgspec.Struct, frozen=True):
    """The agent message suggestions answer; ``content`` is the saved text, never a request copy."""

    id: str
    content: str
    agent_name: str
    agent_description: str = ""


class ContextMessage(msgspec.Struct, frozen=True):
    """A visible message before the anchor. ``id`` lets the generator cut at the anchor itself."""

    speaker: str
    role: str  # "user" | "agent"
    content: str
    id: str | None = None


class Guidance(msgspec.Struct, frozen=True):
    """The anchor turn's understanding of the user (from its metadata): hints, not facts."""

    emotion: dict[str, Any] | str | None = None
    intent: dict[str, Any] | str | None = None


class SuggestionInput(msgspec.Struct, frozen=True):
    anchor: Anchor
    language: str  # BCP-47, from the conversation settings
    latest_user_input: str
    context: list[ContextMessage] = []
    guidance: Guidance | None = None
    pending_stage: str | None = None  # Story's planned next beat: NOT yet happened


class SuggestionOptions(msgspec.Struct, forbid_unknown_fields=True):
    """The only shape the model may answer with."""

    options: list[str]


def option_constraints(count: int, max_chars: int) -> dict[str, dict[str, Any]]:
    """Per-request bounds of ``SuggestionOptions`` for the host's wire schema.

    Exactly ``count`` options, each at most ``max_chars`` characters: a schema-following model
    then cannot answer with too few, too many or too long options, nor loop until the token
    budget cuts it off. Paths as the host's schema path reads them: ``options`` is the list,
    ``options[]`` its items.
    """
    return {"options": {"minItems": count, "maxItems": count}, "options[]": {"maxLength": max_chars}}
