"""Input shapes the app hands to the library: agent personas and group message records.

They are deliberately plain (no ORM rows), so a host other than this app can build them.
"""

from __future__ import annotations

from typing import Literal

import msgspec


class AgentCapabilities(msgspec.Struct, frozen=True, rename="camel"):
    """Structured capability tags, 0..1. ``None`` means "not tagged": persona keywords decide."""

    comfort: float | None = None
    analysis: float | None = None
    deescalation: float | None = None
    playful: float | None = None


class AgentProfile(msgspec.Struct, frozen=True, rename="camel"):
    id: str
    name: str
    aliases: tuple[str, ...] = ()
    headline: str = ""
    description: str = ""
    personality_prompt: str = ""
    tone_prompt: str = ""
    default_prompt: str = ""
    guardrails_prompt: str = ""  # for the actor prompt; not a selection signal
    story_background: str = ""  # likewise: the seed matches persona keywords without it
    capabilities: AgentCapabilities | None = None
    display_order: int = 0

    def persona_text(self) -> str:
        """The persona fields the seed reads for keyword matching (简介、说明、性格、语气、默认提示词)."""
        parts = (self.headline, self.description, self.personality_prompt, self.tone_prompt, self.default_prompt)
        return "\n".join(p for p in parts if p)


class GroupMessage(msgspec.Struct, frozen=True, rename="camel"):
    """One message of the group history. ``seq`` orders them; ``content`` only feeds prompts.
    ``present``: the members (agent ids) present when it was saved; ``None`` when unknown (a
    message older than presence; see ``scheduling.presence``)."""

    role: Literal["user", "agent"]
    seq: int
    agent_id: str | None = None
    content: str = ""
    present: tuple[str, ...] | None = None


class DirectChatStats(msgspec.Struct, frozen=True, rename="camel"):
    """The user's one-on-one conversation with one agent (source of the relationship stage)."""

    message_count: int = 0
    last_message_at_ms: int | None = None
