"""The Story status report of one (user, conversation, agent) scope.

Owners see the report (scene, lines, open goals, quarantine), never the hidden half of the
world; admins additionally get the decoded state, for manual recovery of quarantined events.
Another user's conversation is a 404, exactly like a missing one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.api.schemas import ApiStruct
from app.auth.tokens import Principal
from app.conversations.service import get_owned
from app.db.models import Conversation, ConversationMember
from app.errors import NotFound
from app.story import repository
from app.story.repository import StoryScope
from story.coordinator.envelope import deserialize_state
from story.coordinator.report import StatusReport, status_report


class StoryStatusOut(ApiStruct):
    conversation_id: str
    agent_id: str
    status: str  # not_started | init_failed | waiting_for_acceptance | accepted | failed | unreadable
    revision: int
    updated_at: datetime | None = None
    # What happened last: {"kind": init_failed | advance_pending | waiting_for_acceptance | ..., "reason",
    # "at", "toolCalls", "failures"}; a turn that wrote no state (a failed init) is recorded too.
    last_outcome: dict[str, Any] | None = None
    failure_count: int = 0  # turns in a row whose Story failed (0 after a success)
    report: StatusReport | None = None
    state: dict[str, Any] | None = None  # admins only


async def _conversation(session: AsyncSession, principal: Principal, conversation_id: str) -> Conversation:
    if not principal.is_admin:
        return await get_owned(session, principal.user_id, conversation_id)
    conv = await session.get(Conversation, conversation_id)
    if conv is None:
        raise NotFound(f"conversation {conversation_id} not found", code="conversation_not_found")
    return conv


async def story_status(session: AsyncSession, principal: Principal, conversation_id: str, agent_id: str) -> StoryStatusOut:
    conv = await _conversation(session, principal, conversation_id)
    stored = await repository.read(session, StoryScope(conv.owner_id, conv.id, agent_id))
    if stored is None:
        member = await session.scalar(select(ConversationMember.id).where(
            ConversationMember.conversation_id == conv.id, ConversationMember.agent_id == agent_id))  # fmt: skip
        if member is None:
            raise NotFound(f"agent {agent_id} is not in conversation {conv.id}", code="agent_not_found")
        return StoryStatusOut(conversation_id=conv.id, agent_id=agent_id, status="not_started", revision=0)
    out = StoryStatusOut(conversation_id=conv.id, agent_id=agent_id, status=stored.status, revision=stored.revision,
                         updated_at=stored.updated_at, last_outcome=stored.last_outcome,
                         failure_count=int((stored.last_outcome or {}).get("failures") or 0))  # fmt: skip
    if stored.envelope is None:
        out.status = "not_started" if stored.status == "empty" else stored.status
        return out
    try:
        state = deserialize_state(stored.envelope, agent_id)
    except Exception:  # noqa: BLE001 - shown as unreadable; the next turn reinitializes
        out.status = "unreadable"
        return out
    out.report = status_report(state)
    if principal.is_admin:
        out.state = msgspec.to_builtins(state)
    return out
