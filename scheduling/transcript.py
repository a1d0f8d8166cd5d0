"""Render recent group messages as prompt text with speaker names."""

from __future__ import annotations

from collections.abc import Sequence

from scheduling.profiles import AgentProfile, GroupMessage

USER_LABEL = "User"


def format_transcript(
    messages: Sequence[GroupMessage], agents: Sequence[AgentProfile], *, limit: int = 12, max_chars: int = 300,
) -> str:
    """One ``Speaker: text`` line per message, oldest first, the last ``limit`` by ``seq``.
    Long messages are cut so one monologue cannot crowd the prompt."""
    names = {a.id: a.name for a in agents}
    lines = []
    for m in sorted(messages, key=lambda m: m.seq)[-limit:] if limit > 0 else []:
        speaker = USER_LABEL if m.role == "user" else names.get(m.agent_id or "", m.agent_id or "agent")
        text = " ".join(m.content.split())
        if len(text) > max_chars:
            text = text[: max_chars - 1] + "…"
        lines.append(f"{speaker}: {text}")
    return "\n".join(lines)
