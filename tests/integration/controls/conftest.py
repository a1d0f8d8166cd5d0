"""Fixtures for the message controls (issue 27): the turn and Story fixtures, shared."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from app.db.engine import session_factory
from app.db.models import ConversationControl, ConversationEvent
from tests.integration.story.conftest import story_api, world  # noqa: F401 - fixtures
from tests.integration.turns.conftest import turn_api, turn_replicas  # noqa: F401 - fixtures


async def controls(engine, conv_id: str) -> list[tuple[str, str | None, dict[str, Any]]]:
    async with session_factory(engine)() as s:
        rows = await s.scalars(select(ConversationControl).where(ConversationControl.conversation_id == conv_id)
                               .order_by(ConversationControl.created_at))  # fmt: skip
        return [(r.kind, r.agent_id, r.details) for r in rows]


async def logged_events(engine, conv_id: str) -> list[tuple[str, dict[str, Any]]]:
    async with session_factory(engine)() as s:
        rows = await s.scalars(select(ConversationEvent).where(ConversationEvent.conversation_id == conv_id)
                               .order_by(ConversationEvent.id))  # fmt: skip
        return [(r.event, r.data) for r in rows]
