"""Reading, posting, editing and soft-deleting messages of the owner's conversations."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.conversations.service import get_owned
from app.db.models import Conversation, Message, utcnow
from app.errors import NotFound, PayloadTooLarge, ValidationFailed
from app.messages.schemas import MessageOut, MessagePage
from app.messages.store import InTransaction, content_hash, insert_message
from app.settings import Limits


def to_out(m: Message) -> MessageOut:
    return MessageOut(
        id=m.id, conversation_id=m.conversation_id, turn_id=m.turn_id, seq=m.seq, role=m.role,
        agent_id=m.agent_id, content=m.content, content_hash=m.content_hash, reply_kind=m.reply_kind,
        respond_to_agent_id=m.respond_to_agent_id, metadata=m.metadata_json, created_at=m.created_at,
        edited_at=m.edited_at,
    )  # fmt: skip


def to_json(m: Message) -> dict[str, Any]:
    """The API shape as plain builtins (for stored turn results and SSE events)."""
    return msgspec.to_builtins(to_out(m))


def check_content(content: str, limits: Limits) -> str:
    if not content.strip():
        raise ValidationFailed("content must not be empty", code="empty_content")
    if len(content) > limits.max_message_chars:
        raise PayloadTooLarge(
            f"content has {len(content)} characters; the limit is {limits.max_message_chars}",
            code="content_too_long",
            details={"limit": limits.max_message_chars, "length": len(content)},
        )
    return content


async def list_messages(
    session: AsyncSession,
    owner_id: str,
    conversation_id: str,
    *,
    cursor: int | None,
    limit: int,
    order: Literal["desc", "asc"],
) -> MessagePage:
    """Cursor pagination on ``seq``. ``desc`` (default): newest first, ``cursor`` = only seq < cursor.
    ``asc``: oldest first, ``cursor`` = only seq > cursor. ``nextCursor`` is the seq to pass next,
    or null at the end. Soft-deleted messages are not listed."""
    await get_owned(session, owner_id, conversation_id)
    query = select(Message).where(Message.conversation_id == conversation_id, Message.deleted_at.is_(None))
    if order == "desc":
        if cursor is not None:
            query = query.where(Message.seq < cursor)
        query = query.order_by(Message.seq.desc())
    else:
        if cursor is not None:
            query = query.where(Message.seq > cursor)
        query = query.order_by(Message.seq.asc())
    rows = list(await session.scalars(query.limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return MessagePage(items=[to_out(m) for m in rows], next_cursor=rows[-1].seq if more else None, order=order)


async def post_user_message(
    session: AsyncSession, owner_id: str, conversation_id: str, content: str, limits: Limits,
    in_transaction: InTransaction | None = None,
) -> MessageOut:
    """``in_transaction`` runs in the inserting transaction (e.g. the old suggestions are cleared)."""
    check_content(content, limits)
    await get_owned(session, owner_id, conversation_id)
    await session.commit()  # end the read so the insert's UPDATE opens the write transaction
    message = await insert_message(session, conversation_id, role="user", content=content)
    if in_transaction is not None:
        await in_transaction(session, conversation_id)
    await session.commit()
    return to_out(message)


async def _owned_message(session: AsyncSession, owner_id: str, conversation_id: str, message_id: str) -> Message:
    await get_owned(session, owner_id, conversation_id)
    message = await session.get(Message, message_id)
    if message is None or message.conversation_id != conversation_id or message.deleted_at is not None:
        raise NotFound(f"message {message_id} not found", code="message_not_found")
    return message


async def edit_message(
    session: AsyncSession, owner_id: str, conversation_id: str, message_id: str, content: str, limits: Limits
) -> MessageOut:
    check_content(content, limits)
    message = await _owned_message(session, owner_id, conversation_id, message_id)
    message.content = content
    message.content_hash = content_hash(content)
    message.edited_at = utcnow()
    await session.commit()
    return to_out(message)


async def delete_message(session: AsyncSession, owner_id: str, conversation_id: str, message_id: str) -> None:
    """Soft delete: the row stays (decision history refers to it) but it leaves the visible history
    and the conversation's ``message_count``."""
    message = await _owned_message(session, owner_id, conversation_id, message_id)
    message.deleted_at = utcnow()
    await session.execute(
        update(Conversation)
        .where(Conversation.id == conversation_id)
        .values(message_count=Conversation.message_count - 1)
        .execution_options(synchronize_session=False)
    )
    await session.commit()
