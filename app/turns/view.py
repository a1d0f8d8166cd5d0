"""The one view of a turn, whichever way it is read.

``POST …/turns`` replaying an idempotency key and ``GET …/turns/{id}`` both answer with
``turn_view``: the stored result when the turn finished normally, otherwise (still running, or
abandoned by a process that stopped) the turn's status and error with the user message and every
agent reply that was saved — a saved reply is never hidden by a later crash.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Message, Turn
from app.messages.service import to_json as message_json


async def turn_view(session: AsyncSession, turn: Turn) -> dict[str, Any]:
    if turn.result is not None:
        return turn.result
    user_message = await session.get(Message, turn.user_message_id) if turn.user_message_id else None
    saved = await session.scalars(
        select(Message)
        .where(Message.turn_id == turn.id, Message.role == "agent", Message.deleted_at.is_(None))
        .order_by(Message.seq)
    )
    return {
        "turnId": turn.id,
        "status": turn.status,
        "conversationId": turn.conversation_id,
        "userMessage": message_json(user_message) if user_message else None,
        "agentMessages": [message_json(m) for m in saved],
        "orchestration": {},
        "error": turn.error,
        "trigger": turn.trigger,
    }
