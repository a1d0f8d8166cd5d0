"""The saved Story state envelope and its byte encoding.

The app stores these bytes per (user, conversation, agent) with a revision for
compare-and-swap. Prose is never copied in: evidence is message ids plus content hashes,
and the full text is re-read at settlement. Over ``max_bytes`` the save fails loudly; the
envelope is never trimmed, because trimming would silently drop evidence.
"""

from __future__ import annotations

import hashlib
from typing import Literal

import msgspec

from story.narrative.deal import BeatPacket
from story.narrative.types import NarrativeSnapshot
from story.tools.common import Diagnostic, StoryError
from story.world.stage import StoryStage
from story.world.types import WorldSnapshot

ENVELOPE_VERSION = 1
DEFAULT_MAX_STATE_BYTES = 60_000
QUARANTINE_MAX_BYTES = 64 * 1024

Status = Literal["waiting_for_acceptance", "accepted", "failed"]
# "user": a real user message; "continue": the synthetic action of a Continue request.
ActionKind = Literal["user", "continue"]


class Projection(msgspec.Struct, frozen=True):
    stage: StoryStage
    narrative: BeatPacket


class PendingActor(msgspec.Struct, frozen=True):
    message_id: str
    user_message_id: str
    user_content_hash: str
    projection: Projection
    action_kind: ActionKind = "user"


class EvidenceRef(msgspec.Struct, frozen=True):
    message_id: str
    content_hash: str
    user_action: str
    source_position: int
    action_kind: ActionKind = "user"  # a Continue instruction is evidence of another type


class EventRecord(msgspec.Struct, frozen=True):
    """Accepted evidence of one foreground event; ``closed`` once it ended or was interrupted."""

    event_id: str
    refs: list[EvidenceRef] = []
    closed: bool = False
    interrupted: bool = False
    attempt_positions: list[int] = []
    # 0 for the event's first stretch; an event kept in its end phase while no successor is
    # ready goes on in later stretches, each settled on its own under ``settle_key``
    segment: int = 0

    @property
    def settle_key(self) -> str:
        return self.event_id if self.segment == 0 else f"{self.event_id}#{self.segment}"


class QuarantineRecord(msgspec.Struct, frozen=True):
    event_id: str
    reason: str
    attempt_positions: list[int]
    refs: list[EvidenceRef]
    diagnostics: list[Diagnostic] = []


class StoryState(msgspec.Struct, frozen=True):
    agent_id: str
    world: WorldSnapshot
    narrative: NarrativeSnapshot
    version: int = ENVELOPE_VERSION
    status: Status = "accepted"
    source_position: int = 0
    pending_actor: PendingActor | None = None
    accepted_message_id: str | None = None
    events: list[EventRecord] = []
    quarantine: list[QuarantineRecord] = []


class StateTooLarge(StoryError):
    def __init__(self, size: int, limit: int) -> None:
        self.size, self.limit = size, limit
        super().__init__(f"story state is {size} bytes, over the {limit} byte limit")


class StateAgentMismatch(StoryError):
    def __init__(self, expected: str, actual: str) -> None:
        self.expected, self.actual = expected, actual
        super().__init__(f"story state belongs to agent {actual!r}, not {expected!r}")


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def serialize_state(state: StoryState, max_bytes: int = DEFAULT_MAX_STATE_BYTES) -> bytes:
    """Deterministic bytes (same state → same bytes); raises ``StateTooLarge`` over the cap."""
    data = msgspec.json.encode(state, order="deterministic")
    if len(data) > max_bytes:
        raise StateTooLarge(len(data), max_bytes)
    return data


def deserialize_state(data: bytes, agent_id: str | None = None) -> StoryState:
    state = msgspec.json.decode(data, type=StoryState)
    if agent_id is not None and state.agent_id != agent_id:
        raise StateAgentMismatch(agent_id, state.agent_id)
    return state


def quarantine_record(rec: EventRecord, reason: str, diagnostics: list[Diagnostic]) -> QuarantineRecord:
    """Bounded to 64 KiB: diagnostics go first, then refs are kept newest-first."""
    q = QuarantineRecord(rec.settle_key, reason, list(rec.attempt_positions), list(rec.refs), list(diagnostics))
    while len(msgspec.json.encode(q)) > QUARANTINE_MAX_BYTES and (q.diagnostics or len(q.refs) > 1):
        if q.diagnostics:
            q = msgspec.structs.replace(q, diagnostics=q.diagnostics[:-1])
        else:
            q = msgspec.structs.replace(q, refs=q.refs[1:])
    return q
