"""Pure recovery decisions: may the pending reply be adopted, and when is an event quarantined.

These are the rows of the seed's recovery table that need no I/O; the coordinator applies
them and the app persists the result.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from story.coordinator.envelope import EventRecord, StoryState, content_hash
from story.ports import SavedMessage

QUARANTINE_ATTEMPTS = 3
QUARANTINE_SPAN = 12

Decision = Literal["adopt", "continue", "reinitialize", "read_only", "fresh"]


class HistoryMessage(msgspec.Struct, frozen=True):
    """One visible message as the app's database holds it, oldest first."""

    message_id: str
    role: Literal["user", "agent"]
    content: str
    agent_id: str | None = None
    name: str = ""
    deleted: bool = False


def decide_start(state: StoryState | None, history: list[HistoryMessage], agent_id: str,
                 source_position: int) -> Decision:
    """``adopt`` only when the pending reply is intact: still there, this agent's, not deleted,
    and preceded by the same user message it answered. A rollback behind the saved source
    position is read-only: the store cannot take an older source as a newer version."""
    if state is None:
        return "fresh"
    if source_position < state.source_position:
        return "read_only"
    pa = state.pending_actor
    if pa is None:
        return "continue"
    visible = [m for m in history if not m.deleted]
    idx = next((i for i, m in enumerate(visible) if m.message_id == pa.message_id), None)
    if idx is None or visible[idx].role != "agent" or visible[idx].agent_id != agent_id:
        return "reinitialize"
    before = next((m for m in reversed(visible[:idx]) if m.role == "user"), None)
    if before is None or before.message_id != pa.user_message_id or content_hash(before.content) != pa.user_content_hash:
        return "reinitialize"
    return "adopt"


def saved_message_ok(msg: SavedMessage | None, agent_id: str) -> bool:
    return msg is not None and not msg.deleted and (msg.agent_id in (None, agent_id))


def record_attempt(rec: EventRecord, position: int) -> EventRecord:
    if position in rec.attempt_positions:
        return rec
    return msgspec.structs.replace(rec, attempt_positions=[*rec.attempt_positions, position])


def should_quarantine(rec: EventRecord, position: int) -> str | None:
    """3 attempts at distinct source positions, or 12 positions since the first attempt."""
    if len(set(rec.attempt_positions)) >= QUARANTINE_ATTEMPTS:
        return f"{QUARANTINE_ATTEMPTS} settle attempts at distinct source positions"
    if rec.attempt_positions and position - rec.attempt_positions[0] >= QUARANTINE_SPAN:
        return f"{QUARANTINE_SPAN} source positions since the first attempt"
    return None
