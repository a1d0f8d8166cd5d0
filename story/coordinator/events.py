"""Event evidence and settlement inside the coordinator.

An event's accepted replies are collected as message refs while it runs; when it ends or is
interrupted it is settled over the full saved text of those messages, re-read by id. An
event whose settlement stays unknown is retried on later turns and quarantined after the
seed's thresholds, with its refs kept for manual recovery.
"""

from __future__ import annotations

import msgspec

from story.coordinator.envelope import (
    QUARANTINED_ID_WINDOW, EventRecord, EvidenceRef, QuarantineRecord, StoryState, content_hash, quarantine_record,
)
from story.coordinator.recovery import record_attempt, should_quarantine
from story.narrative.settle import NextAction
from story.ports import MessageReader
from story.ports import SavedMessage
from story.tools.common import Diagnostic, StoryContext, Usage
from story.tools.narrative_tools import (
    NarrativeRebranchTool, NarrativeSettleEventTool, RebranchInput, SettleInput,
)

replace = msgspec.structs.replace


def add_evidence(state: StoryState, event_id: str, ref: EvidenceRef) -> StoryState:
    events = list(state.events)
    idx = next((i for i, e in enumerate(events) if e.event_id == event_id and not e.closed), None)
    if idx is None:
        events.append(EventRecord(event_id, [ref], segment=_next_segment(state, event_id)))
    elif all(r.message_id != ref.message_id for r in events[idx].refs):
        events[idx] = replace(events[idx], refs=[*events[idx].refs, ref])
    return replace(state, events=events)


def _next_segment(state: StoryState, event_id: str) -> int:
    """Past stretches of this event: still queued, or already settled (by their settle key)."""
    keys = {e.settle_key for e in state.events if e.event_id == event_id}
    keys |= {k for k in state.narrative.clock.settled_event_ids if k == event_id or k.startswith(f"{event_id}#")}
    quarantined = [*state.quarantined_ids, *(q.event_id for q in state.quarantine)]
    keys |= {k for k in quarantined if k == event_id or k.startswith(f"{event_id}#")}
    return len(keys)


def _quarantined(state: StoryState, rec: EventRecord, reason: str, diagnostics: list[Diagnostic]) -> StoryState:
    """Into the outbox (stored outside the state by the host) and the bounded id list."""
    q = quarantine_record(rec, reason, diagnostics)
    ids = [*[i for i in state.quarantined_ids if i != q.event_id], q.event_id][-QUARANTINED_ID_WINDOW:]
    return replace(state, quarantine=[*state.quarantine, q], quarantined_ids=ids)


def quarantine_pending(state: StoryState, event_id: str, ref: EvidenceRef, reason: str,
                       diagnostics: list[Diagnostic]) -> StoryState:
    """A reply whose world settlement was given up: its evidence is kept for manual recovery."""
    rec = EventRecord(event_id, [ref], closed=True, attempt_positions=[ref.source_position],
                      segment=_next_segment(state, event_id))
    return _quarantined(state, rec, reason, diagnostics)


def close_event(state: StoryState, event_id: str, interrupted: bool) -> StoryState:
    events = [replace(e, closed=True, interrupted=interrupted) if e.event_id == event_id and not e.closed else e
              for e in state.events]
    return replace(state, events=events)


def unresolved(state: StoryState) -> list[EventRecord]:
    return [e for e in state.events if e.closed]


def _same(a: EventRecord, b: EventRecord) -> bool:
    return a.closed and b.closed and a.settle_key == b.settle_key


def _without(state: StoryState, rec: EventRecord) -> list[EventRecord]:
    return [e for e in state.events if not _same(e, rec)]


class SettleRun(msgspec.Struct):
    state: StoryState
    diagnostics: list[Diagnostic] = []
    usage: Usage = Usage()
    calls: list[str] = []


async def _event_text(reader: MessageReader, rec: EventRecord, run: SettleRun) -> tuple[str | None, list[str]]:
    """The event's full saved prose (None if any of it is gone or changed) and the user actions,
    each re-read from its user message; a changed user message only loses its action."""
    ids = [r.message_id for r in rec.refs] + [r.action.message_id for r in rec.refs if r.action is not None]
    saved = await reader.read(list(dict.fromkeys(ids)))
    parts = []
    for r in rec.refs:
        m = saved.get(r.message_id)
        if m is None or m.deleted or content_hash(m.content) != r.content_hash:
            return None, []
        parts.append(m.content)
    return "\n\n".join(parts), [a for r in rec.refs if (a := _action_text(r, saved, run)) is not None]


def _action_text(ref: EvidenceRef, saved: dict[str, SavedMessage], run: SettleRun) -> str | None:
    if ref.action_kind != "user":
        return None
    if ref.action is None:
        return ref.legacy_user_action or None
    m = saved.get(ref.action.message_id)
    text = ref.action.resolve(m.content) if m is not None and not m.deleted else None
    if text is None:
        run.diagnostics.append(Diagnostic("user_action_unavailable", "", {"message_id": ref.action.message_id}))
    return text


async def settle_closed(state: StoryState, ctx: StoryContext, position: int, reader: MessageReader,
                        settle: NarrativeSettleEventTool, rebranch: NarrativeRebranchTool, setting: str) -> SettleRun:
    run = SettleRun(state)
    for rec in unresolved(state):
        text, user_actions = await _event_text(reader, rec, run) if rec.refs else (None, [])
        outcome, actions = "unknown", []
        if text is None or not text.strip():
            run.diagnostics.append(Diagnostic("event_evidence_unavailable", "", {"event_id": rec.settle_key}))
        else:
            res = await settle.execute(SettleInput(ctx, run.state.narrative, rec.settle_key, text, user_actions,
                                                   rec.interrupted))
            run.calls.append(f"narrative_settle_event:{res.outcome}")
            run.diagnostics += res.diagnostics
            run.usage = run.usage.plus(res.usage)
            outcome, actions = res.outcome, res.next_actions
            if outcome != "unknown":
                run.state = replace(run.state, narrative=res.snapshot)
        if outcome in ("settled", "duplicate"):
            run.state = replace(run.state, events=_without(run.state, rec))
            await _apply_actions(run, actions, ctx, rebranch, setting)
            continue
        tried = record_attempt(rec, position)
        reason = should_quarantine(tried, position)
        if reason is None:
            run.state = replace(run.state, events=[tried if _same(e, rec) else e for e in run.state.events])
        else:
            run.state = _quarantined(replace(run.state, events=_without(run.state, rec)), tried, reason,
                                     run.diagnostics[-5:])
            run.diagnostics.append(Diagnostic("story_event_quarantine", reason, {"event_id": rec.settle_key}))
    return run


async def _apply_actions(run: SettleRun, actions: list[NextAction], ctx: StoryContext,
                         rebranch: NarrativeRebranchTool, setting: str) -> None:
    for a in actions:
        if a.kind != "rebranch" or a.scope is None:
            continue  # plan-cycle is honoured through need_plan before dealing
        res = await rebranch.execute(RebranchInput(ctx, run.state.narrative, a.scope, setting, a.direction))
        run.calls.append(f"narrative_rebranch:{res.outcome}")
        run.diagnostics += res.diagnostics
        run.usage = run.usage.plus(res.usage)
        run.state = replace(run.state, narrative=res.snapshot)


def requeue_quarantined(state: StoryState, record: QuarantineRecord) -> StoryState:
    """An operator releases a quarantined event: it is queued for settlement again (closed, with
    its refs, no attempts yet) and counts as unresolved until a turn settles or re-quarantines it."""
    base, _, seg = record.event_id.partition("#")
    segment = int(seg) if seg.isdigit() else 0
    if any(e.closed and e.settle_key == record.event_id for e in state.events):
        return state
    rec = EventRecord(base, list(record.refs), closed=True, segment=segment)
    return replace(state, events=[*state.events, rec],
                   quarantined_ids=[i for i in state.quarantined_ids if i != record.event_id])
