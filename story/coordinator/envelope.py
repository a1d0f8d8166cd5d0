"""The saved Story state envelope and its byte encoding.

The app stores these bytes per (user, conversation, agent) with a revision for
compare-and-swap. Text is never copied in, neither the agents' prose nor the user's: evidence is
message ids plus content hashes, a user action is a span of a saved user message
(``ActionRef``: message id, offsets, hash), and the full text is re-read when it is needed
(adoption, settlement). The prepared turn's baseline world is stored as the fields that differ
from the prepared world, not as a second copy. Quarantined events leave the state: the state
carries only this turn's new records (an outbox the host moves to its own store when it saves)
and a bounded list of their ids. Over ``max_bytes`` a save first compacts settled history
(``compact``); evidence of unsettled events is never trimmed.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

import msgspec

from story.coordinator.plan_wait import PlanWait
from story.narrative.deal import BeatPacket
from story.narrative.types import NarrativeSnapshot
from story.tools.common import Diagnostic, StoryError
from story.world.stage import StoryStage
from story.world.types import BackgroundKind, Intent, PendingTurn, WorldSnapshot

ENVELOPE_VERSION = 2
DEFAULT_MAX_STATE_BYTES = 60_000
QUARANTINE_MAX_BYTES = 64 * 1024
QUARANTINED_ID_WINDOW = 64  # ids of quarantined events kept in the state (segment numbering)
CONTINUE_TEXT_MAX = 500  # a Continue instruction is the only action text the state holds

# "state_too_large": even compacted, the state would not fit; the Story halts for this scope
Status = Literal["waiting_for_acceptance", "accepted", "failed", "state_too_large"]
# "user": a real user message; "continue": the synthetic action of a Continue request.
ActionKind = Literal["user", "continue"]


class Projection(msgspec.Struct, frozen=True):
    stage: StoryStage
    narrative: BeatPacket


class ActionRef(msgspec.Struct, frozen=True):
    """The user's action as a span of a saved user message: re-read and checked, never copied."""

    message_id: str
    start: int
    end: int
    content_hash: str  # of the span

    def resolve(self, content: str) -> str | None:
        span = content[self.start:self.end]
        return span if content_hash(span) == self.content_hash else None


class PendingActor(msgspec.Struct, frozen=True, omit_defaults=True):
    message_id: str
    user_message_id: str
    user_content_hash: str
    projection: Projection  # saved with the stage's ``honour_actions`` empty (bound at adoption)
    action_kind: ActionKind = "user"
    action: ActionRef | None = None  # a user action; None in envelopes of version 1
    continue_text: str | None = None  # a Continue action's instruction (short, synthetic)


class EvidenceRef(msgspec.Struct, frozen=True, omit_defaults=True):
    message_id: str
    content_hash: str
    legacy_user_action: str = msgspec.field(default="", name="user_action")  # version 1 copied the text
    source_position: int = 0
    action_kind: ActionKind = "user"  # a Continue instruction is evidence of another type
    action: ActionRef | None = None


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


class StoredPending(msgspec.Struct, frozen=True):
    """``world.pending`` as saved: the baseline is the fields that differ from the prepared world."""

    turn_id: str
    action_key: str
    intent: Intent
    baseline_changes: dict[str, Any]
    bias: BackgroundKind | None = None


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
    # The outbox: events quarantined by this turn, for the host to store outside the state when
    # it saves (``serialize_state`` leaves them out). Envelopes of version 1 kept all of them here.
    quarantine: list[QuarantineRecord] = []
    quarantined_ids: list[str] = []  # newest last, bounded by ``QUARANTINED_ID_WINDOW``
    pending_turn: StoredPending | None = None  # only in the bytes: loaded into ``world.pending``
    plan_wait: PlanWait = PlanWait()  # when a failed plan cycle is tried again (``plan_wait``)


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


def _list_delta(base: list[Any], now: list[Any]) -> dict[str, Any] | list[Any]:
    """A baseline list as indices into the prepared world's list plus the items it lacks
    (``-1`` takes the next of ``extra``), when that is shorter than the list itself."""
    ref, extra, used = [], [], set()
    for item in base:
        idx = next((i for i, x in enumerate(now) if i not in used and x == item), None)
        if idx is None:
            ref.append(-1)
            extra.append(item)
        else:
            used.add(idx)
            ref.append(idx)
    delta = {"$list": ref, "extra": extra}
    return delta if len(msgspec.json.encode(delta)) < len(msgspec.json.encode(base)) else base


def _from_delta(value: Any, now: list[Any]) -> Any:
    if not isinstance(value, dict) or "$list" not in value:
        return value
    extra = iter(value["extra"])
    return [now[i] if i >= 0 else next(extra) for i in value["$list"]]


def _stored_pending(world: WorldSnapshot) -> StoredPending | None:
    p = world.pending
    if p is None:
        return None
    now = msgspec.to_builtins(msgspec.structs.replace(world, pending=None))
    base = msgspec.to_builtins(p.baseline)
    changes = {k: _list_delta(v, now[k]) if isinstance(v, list) and isinstance(now.get(k), list) else v
               for k, v in base.items() if now.get(k) != v}
    return StoredPending(p.turn_id, p.action_key, p.intent, changes, p.bias)


def _loaded_pending(world: WorldSnapshot, sp: StoredPending) -> PendingTurn:
    now = msgspec.to_builtins(world)
    changes = {k: _from_delta(v, now.get(k) or []) for k, v in sp.baseline_changes.items()}
    baseline = msgspec.convert({**now, **changes, "pending": None}, WorldSnapshot)
    return PendingTurn(sp.turn_id, sp.action_key, sp.intent, "", baseline, sp.bias)


def _without_action_text(pa: PendingActor | None) -> PendingActor | None:
    if pa is None or pa.action is None and pa.continue_text is None:
        return pa  # version 1: the text was part of the saved stage
    stage = msgspec.structs.replace(pa.projection.stage, honour_actions=[])
    return msgspec.structs.replace(pa, projection=msgspec.structs.replace(pa.projection, stage=stage))


def to_saved(state: StoryState) -> StoryState:
    """What is written: no action text, the baseline as changes, no quarantine outbox."""
    pending = _stored_pending(state.world)
    world = state.world
    if pending is not None:
        world = msgspec.structs.replace(world, pending=None)
    return msgspec.structs.replace(state, world=world, pending_turn=pending, quarantine=[], version=ENVELOPE_VERSION,
                                   pending_actor=_without_action_text(state.pending_actor))


def serialize_state(state: StoryState, max_bytes: int = DEFAULT_MAX_STATE_BYTES) -> bytes:
    """Deterministic bytes (same state → same bytes); raises ``StateTooLarge`` over the cap."""
    data = msgspec.json.encode(to_saved(state), order="deterministic")
    if len(data) > max_bytes:
        raise StateTooLarge(len(data), max_bytes)
    return data


def deserialize_state(data: bytes, agent_id: str | None = None) -> StoryState:
    """The saved state; a prepared turn's action text is still empty (``bind_action`` fills it)."""
    state = msgspec.json.decode(data, type=StoryState)
    if agent_id is not None and state.agent_id != agent_id:
        raise StateAgentMismatch(agent_id, state.agent_id)
    if state.pending_turn is not None:
        world = msgspec.structs.replace(state.world, pending=_loaded_pending(state.world, state.pending_turn))
        state = msgspec.structs.replace(state, world=world, pending_turn=None)
    return state


def bind_action(state: StoryState, text: str) -> StoryState:
    """Put the re-read action text back where the prepared turn and its saved stage expect it."""
    pa, pending = state.pending_actor, state.world.pending
    if pa is None or pending is None:
        return state
    stage = msgspec.structs.replace(pa.projection.stage, honour_actions=[text] if text else [])
    pa = msgspec.structs.replace(pa, projection=msgspec.structs.replace(pa.projection, stage=stage))
    world = msgspec.structs.replace(state.world, pending=msgspec.structs.replace(pending, user_text=text))
    return msgspec.structs.replace(state, pending_actor=pa, world=world)


def action_ref(message_id: str, text: str, start: int = 0, end: int | None = None) -> ActionRef:
    end = len(text) if end is None else end
    return ActionRef(message_id, start, end, content_hash(text[start:end]))


def quarantine_record(rec: EventRecord, reason: str, diagnostics: list[Diagnostic]) -> QuarantineRecord:
    """Bounded to 64 KiB: diagnostics go first, then refs are kept newest-first."""
    q = QuarantineRecord(rec.settle_key, reason, list(rec.attempt_positions), list(rec.refs), list(diagnostics))
    while len(msgspec.json.encode(q)) > QUARANTINE_MAX_BYTES and (q.diagnostics or len(q.refs) > 1):
        if q.diagnostics:
            q = msgspec.structs.replace(q, diagnostics=q.diagnostics[:-1])
        else:
            q = msgspec.structs.replace(q, refs=q.refs[1:])
    return q
