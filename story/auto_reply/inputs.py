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


def options_json_schema(count: int | None = None) -> dict[str, Any]:
    """JSON schema of ``SuggestionOptions``, fixed up for strict structured output.

    Root ``$ref`` inlined, every property required, no ``default`` keys — the same fix-up the
    app applies, done here so the library's request is ready to send as is. With ``count`` the
    array is pinned to exactly that many items, so schema-following providers get it right.
    """
    raw = msgspec.json.schema(SuggestionOptions)
    defs = raw.get("$defs", {})
    schema = _strict(_resolve(raw, defs), defs)
    if count is not None:
        schema["properties"]["options"].update(minItems=count, maxItems=count)
    return schema


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return dict(defs[ref.removeprefix("#/$defs/")])
    return {k: v for k, v in node.items() if k != "$defs"}


def _strict(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_strict(n, defs) for n in node]
    if not isinstance(node, dict):
        return node
    node = _resolve(node, defs)
    out = {k: _strict(v, defs) for k, v in node.items() if k not in ("default", "title")}
    if out.get("type") == "object" and "properties" in out:
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out
