"""One row per control a user used on a conversation (issue 27): ``regenerate``, ``select`` (a
swipe to another version; ``details.back`` when to an older one), ``rewind``, ``cancel``. These
are the strongest signals of a bad reply a tuning script can get: ``analytics.queries.controls``
counts them per agent."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import ConversationControl, new_id, utcnow

KINDS = ("regenerate", "select", "rewind", "cancel")


async def record_control(session: AsyncSession, conversation_id: str, kind: str, *, agent_id: str | None = None,
                         message_id: str | None = None, turn_id: str | None = None,
                         details: dict[str, Any] | None = None) -> None:  # fmt: skip
    """Insert in the caller's transaction; the caller commits."""
    assert kind in KINDS, kind
    await session.execute(insert(ConversationControl.__table__).values(
        id=new_id(), conversation_id=conversation_id, kind=kind, agent_id=agent_id, message_id=message_id,
        turn_id=turn_id, details=details or {}, created_at=utcnow(),
    ))  # fmt: skip
