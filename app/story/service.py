"""The Story status report of one (user, conversation, agent) scope.

Owners see the report (scene, lines, open goals, quarantine, the last failure), never the hidden
half of the world; admins additionally get the decoded state, and list, release (re-queue for
settlement) or discard quarantined events. Another user's conversation is a 404, exactly like a
missing one.
"""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.api.schemas import ApiStruct
from app.auth.tokens import Principal
from app.conversations.service import get_readable
from app.conversations.settings import StorySettings
from app.db.models import Conversation, ConversationMember, StoryQuarantine, new_id, utcnow
from app.errors import Conflict, NotFound
from app.story import repository
from app.story.repository import StoryScope
from story.coordinator.envelope import QuarantineRecord, deserialize_state, serialize_state
from story.coordinator.events import requeue_quarantined
from story.coordinator.report import StatusReport, status_report


class LastFailure(ApiStruct, kw_only=True):
    kind: str | None = None
    reason: str
    at: str | None = None
    count: int = 1  # turns in a row when it was recorded
    total: int = 1  # failures recorded for this scope


class StoryStatusOut(ApiStruct):
    conversation_id: str
    agent_id: str
    # not_started | init_failed | waiting_for_acceptance | accepted | failed | state_too_large | unreadable | reset
    status: str
    revision: int
    updated_at: datetime | None = None
    # What happened last: {"kind": init_failed | advance_pending | waiting_for_acceptance | ..., "reason",
    # "at", "toolCalls", "failures"}; a turn that wrote no state (a failed init) is recorded too.
    last_outcome: dict[str, Any] | None = None
    failure_count: int = 0  # turns in a row whose Story failed (0 after a success)
    last_failure: LastFailure | None = None  # kept after later successes
    report: StatusReport | None = None
    state: dict[str, Any] | None = None  # admins only


async def _conversation(session: AsyncSession, principal: Principal, conversation_id: str) -> Conversation:
    return await get_readable(session, principal, conversation_id)


async def _require_member(session: AsyncSession, conv: Conversation, agent_id: str) -> None:
    """A scope with no state row yet: a 404 unless the agent is a member of the conversation."""
    member = await session.scalar(select(ConversationMember.id).where(
        ConversationMember.conversation_id == conv.id, ConversationMember.agent_id == agent_id))  # fmt: skip
    if member is None:
        raise NotFound(f"agent {agent_id} is not in conversation {conv.id}", code="agent_not_found")


async def story_status(session: AsyncSession, principal: Principal, conversation_id: str, agent_id: str) -> StoryStatusOut:
    conv = await _conversation(session, principal, conversation_id)
    stored = await repository.read(session, StoryScope(conv.owner_id, conv.id, agent_id))
    if stored is None:
        await _require_member(session, conv, agent_id)
        return StoryStatusOut(conversation_id=conv.id, agent_id=agent_id, status="not_started", revision=0)
    out = StoryStatusOut(conversation_id=conv.id, agent_id=agent_id, status=stored.status, revision=stored.revision,
                         updated_at=stored.updated_at, last_outcome=stored.last_outcome,
                         failure_count=repository.prior_failures(stored),
                         last_failure=_last_failure(stored.last_outcome))  # fmt: skip
    if stored.envelope is None:
        out.status = "not_started" if stored.status == "empty" else stored.status  # also "reset": starts next turn
        return out
    try:
        state = deserialize_state(stored.envelope, agent_id)
    except Exception:  # noqa: BLE001 - shown as unreadable; the next turn reinitializes
        out.status = "unreadable"
        return out
    records = [_record(q) for q in await repository.quarantine_of(session, stored.id)]
    out.report = status_report(state, [r for r in records if r is not None])
    if principal.is_admin:
        out.state = msgspec.to_builtins(state)
    return out


class StoryResetOut(ApiStruct):
    conversation_id: str
    agent_id: str
    revision: int  # the scope's new revision; the next turn initialises the Story afresh
    previous_status: str
    previous_revision: int
    archived_id: str  # the old state, kept as a quarantine record of status "reset" (admin)


async def reset_story(session: AsyncSession, principal: Principal, conversation_id: str, agent_id: str) -> StoryResetOut:
    """Owner or admin: a halted (``state_too_large``), failed or unreadable scope, or any other,
    starts over. The old state is kept for an admin (``GET …/quarantine?status=reset``) and the
    reset is recorded in the report (``lastOutcome.kind = "reset"``, ``lastOutcome.lastReset``)."""
    conv = await _conversation(session, principal, conversation_id)
    stored = await repository.read(session, StoryScope(conv.owner_id, conv.id, agent_id))
    if stored is None:
        await _require_member(session, conv, agent_id)
        raise Conflict(f"the Story of agent {agent_id} has not started in conversation {conv.id}: nothing to reset",
                       code="story_not_started")  # fmt: skip
    at, record_id = utcnow().isoformat(), new_id()
    archived = {"kind": "reset", "reason": f"reset by {principal.user_id} (was {stored.status})",
                "previous_status": stored.status, "previous_revision": stored.revision, "reset_by": principal.user_id,
                "at": at, "last_outcome": stored.last_outcome,
                "envelope_b64": base64.b64encode(stored.envelope).decode() if stored.envelope is not None else None}  # fmt: skip
    outcome = {"kind": "reset", "at": at, "by": principal.user_id, "previousStatus": stored.status,
               "previousRevision": stored.revision, "archivedId": record_id, "toolCalls": []}  # fmt: skip
    revision = await repository.reset_state(session, stored.id, stored.revision, record_id=record_id,
                                            archived=archived, last_outcome=outcome)  # fmt: skip
    return StoryResetOut(conversation_id=conv.id, agent_id=agent_id, revision=revision, previous_status=stored.status,
                         previous_revision=stored.revision, archived_id=record_id)  # fmt: skip


def _last_failure(outcome: dict[str, Any] | None) -> LastFailure | None:
    raw = (outcome or {}).get("lastFailure")
    try:
        return msgspec.convert(raw, LastFailure) if raw else None
    except msgspec.ValidationError:
        return None


def _record(row: StoryQuarantine) -> QuarantineRecord | None:
    try:
        return msgspec.convert(row.record, QuarantineRecord)
    except msgspec.ValidationError:
        return None


# -- admin: quarantined events -------------------------------------------------------------------


class QuarantineOut(ApiStruct):
    id: str
    conversation_id: str
    agent_id: str
    owner_id: str
    event_id: str
    reason: str
    status: str  # quarantined | released | discarded | reset
    attempt_positions: list[int]
    message_ids: list[str]
    created_at: datetime
    resolved_at: datetime | None = None
    kind: str = "event"  # "event": an event kept for settlement; "reset": a state archived by a reset
    previous_state: dict[str, Any] | None = None  # a reset record's old state, decoded (when it was readable)


def _previous_state(row: StoryQuarantine) -> dict[str, Any] | None:
    raw = (row.record or {}).get("envelope_b64")
    if row.status != "reset" or not raw:
        return None
    try:
        return msgspec.to_builtins(deserialize_state(base64.b64decode(raw), row.agent_id))
    except Exception:  # noqa: BLE001 - an unreadable old state is still kept, only not shown decoded
        return None


def _out(row: StoryQuarantine) -> QuarantineOut:
    rec = row.record or {}
    return QuarantineOut(
        id=row.id, conversation_id=row.conversation_id, agent_id=row.agent_id, owner_id=row.owner_id,
        event_id=row.event_id, reason=row.reason, status=row.status,
        attempt_positions=list(rec.get("attempt_positions") or []),
        message_ids=[r.get("message_id", "") for r in rec.get("refs") or [] if isinstance(r, dict)],
        created_at=row.created_at, resolved_at=row.resolved_at,
        kind="reset" if row.status == "reset" else "event", previous_state=_previous_state(row),
    )  # fmt: skip


async def list_quarantine(session: AsyncSession, principal: Principal, *, conversation_id: str | None,
                          agent_id: str | None, status: str | None) -> list[QuarantineOut]:
    principal.require_admin()
    rows = await repository.list_quarantine(session, conversation_id=conversation_id, agent_id=agent_id,
                                            status=None if status == "all" else status)  # fmt: skip
    return [_out(r) for r in rows]


async def _open_record(session: AsyncSession, record_id: str, scope: tuple[str, str]) -> StoryQuarantine:
    row = await repository.get_quarantined(session, record_id)
    if row is None or (row.conversation_id, row.agent_id) != scope:
        raise NotFound(f"quarantined event {record_id} not found", code="quarantine_not_found")
    if row.status != "quarantined":
        raise Conflict(f"quarantined event {record_id} is already {row.status}", code="quarantine_resolved")
    return row


async def discard_quarantined(session: AsyncSession, principal: Principal, record_id: str,
                              scope: tuple[str, str]) -> QuarantineOut:  # fmt: skip
    principal.require_admin()
    await _open_record(session, record_id, scope)
    if not await repository.resolve_quarantined(session, record_id, "discarded"):
        raise Conflict(f"quarantined event {record_id} was resolved meanwhile", code="quarantine_resolved")
    return _out(await _open_or_resolved(session, record_id))


async def release_quarantined(session: AsyncSession, principal: Principal, record_id: str,
                              scope: tuple[str, str]) -> QuarantineOut:  # fmt: skip
    """Re-queue the event in its state (one CAS write): the next turn settles it again."""
    principal.require_admin()
    row = await _open_record(session, record_id, scope)
    record = _record(row)
    scope = StoryScope(row.owner_id, row.conversation_id, row.agent_id)
    stored = await repository.read(session, scope)
    if record is None or stored is None or stored.envelope is None:
        raise Conflict(f"the Story state of quarantined event {record_id} cannot take it back", code="story_state_missing")
    state = requeue_quarantined(deserialize_state(stored.envelope, row.agent_id), record)
    conv = await session.get(Conversation, row.conversation_id)
    limit = msgspec.convert(((conv.settings if conv else None) or {}).get("story") or {}, StorySettings).max_state_bytes
    envelope = serialize_state(state, limit)
    if not await repository.resolve_quarantined(session, record_id, "released",
                                                state_write=(stored.id, stored.revision, envelope)):
        raise Conflict(f"quarantined event {record_id} was resolved meanwhile", code="quarantine_resolved")
    return _out(await _open_or_resolved(session, record_id))


async def _open_or_resolved(session: AsyncSession, record_id: str) -> StoryQuarantine:
    row = await repository.get_quarantined(session, record_id)
    assert row is not None
    return row
