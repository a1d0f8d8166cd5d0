"""Message insertion with a gap-free per-conversation ``seq``.

The counter lives on the conversation row and is bumped by an ``UPDATE ... RETURNING`` that is the
first statement of the inserting transaction. On PostgreSQL the row lock serialises concurrent
inserts into one conversation; on SQLite the first write takes the database write lock (waiting on
the busy timeout). Either way the seq, ``message_count`` and ``last_message_at_ms`` change in the
same transaction as the insert, so a rolled-back insert leaves no gap.

Every message records the members present when it was saved (``present_agent_ids``, muted ones
included), read in the same transaction after the seq is taken: the presence of
``scheduling/presence.py``.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import bindparam, case, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Conversation, ConversationMember, Message, new_id, utcnow
from app.errors import NotFound

# Work that joins the transaction storing a new user message (e.g. the old suggestions are cleared).
InTransaction = Callable[[AsyncSession, str], Awaitable[None]]

# Core statements built once (three messages a turn: the ORM layer, and building the statement
# each time, cost more than the SQL). Bind names differ from column names on purpose.
_conv = Conversation.__table__.c
_NEXT_SEQ = (
    update(Conversation.__table__)
    .where(_conv.id == bindparam("p_conversation"))
    .values(
        last_seq=_conv.last_seq + 1,
        message_count=_conv.message_count + 1,
        last_message_at_ms=case((func.coalesce(_conv.last_message_at_ms, 0) > bindparam("p_at_ms"), _conv.last_message_at_ms),
                                else_=bindparam("p_at_ms")),
        updated_at=bindparam("p_now"),
    )
    .returning(_conv.last_seq)
)  # fmt: skip
_INSERT_MESSAGE = insert(Message.__table__)
_member = ConversationMember.__table__.c
_PRESENT = select(_member.agent_id).where(_member.conversation_id == bindparam("p_conversation")).order_by(_member.id)


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def now_ms() -> int:
    return time.time_ns() // 1_000_000


async def insert_message(
    session: AsyncSession,
    conversation_id: str,
    *,
    role: str,
    content: str,
    agent_id: str | None = None,
    turn_id: str | None = None,
    reply_kind: str | None = None,
    respond_to_agent_id: str | None = None,
    metadata: dict[str, Any] | None = None,
    at_ms: int | None = None,
    message_id: str | None = None,
) -> Message:
    """Insert one message; the caller commits. Must be the first write of the transaction."""
    at_ms = at_ms if at_ms is not None else now_ms()
    params = {"p_conversation": conversation_id, "p_at_ms": at_ms, "p_now": utcnow()}
    seq = (await session.execute(_NEXT_SEQ, params)).scalar()
    if seq is None:
        raise NotFound(f"conversation {conversation_id} not found", code="conversation_not_found")
    present = list((await session.execute(_PRESENT, {"p_conversation": conversation_id})).scalars())
    values = {
        "id": message_id or new_id(), "conversation_id": conversation_id, "turn_id": turn_id, "seq": seq,
        "role": role, "agent_id": agent_id, "content": content, "content_hash": content_hash(content),
        "reply_kind": reply_kind, "respond_to_agent_id": respond_to_agent_id, "metadata_json": metadata or {},
        "present_agent_ids": present, "created_at": utcnow(), "edited_at": None, "deleted_at": None,
    }  # fmt: skip
    await session.execute(_INSERT_MESSAGE, values)
    return Message(**values)
