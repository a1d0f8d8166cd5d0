"""Reading, posting, editing and soft-deleting messages of the owner's conversations."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.tokens import Principal
from app.conversations.service import get_owned, get_readable
from app.db.models import Conversation, Message, utcnow
from app.errors import NotFound, PayloadTooLarge, ValidationFailed
from app.messages import versions
from app.messages.schemas import HiddenMessageOut, HiddenPage, MessageOut, MessagePage
from app.messages.store import InTransaction, content_hash, insert_message
from app.settings import Limits


def to_out(m: Message) -> MessageOut:
    return MessageOut(
        id=m.id, conversation_id=m.conversation_id, turn_id=m.turn_id, seq=m.seq, role=m.role,
        agent_id=m.agent_id, content=m.content, content_hash=m.content_hash, reply_kind=m.reply_kind,
        respond_to_agent_id=m.respond_to_agent_id, metadata=m.metadata_json, created_at=m.created_at,
        edited_at=m.edited_at, selected_version=m.selected_version, present_agent_ids=m.present_agent_ids,
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


async def list_hidden(session: AsyncSession, principal: Principal, conversation_id: str, *, before: int | None,
                      limit: int) -> HiddenPage:  # fmt: skip
    """The hidden branches rewinds left (owner or admin), newest first; ``before`` continues."""
    await get_readable(session, principal, conversation_id)
    query = select(Message).where(Message.conversation_id == conversation_id, Message.hidden_at.is_not(None))
    if before is not None:
        query = query.where(Message.seq < before)
    rows = list(await session.scalars(query.order_by(Message.seq.desc()).limit(limit + 1)))
    more, rows = len(rows) > limit, rows[:limit]
    items = [HiddenMessageOut(**msgspec.structs.asdict(to_out(m)), hidden_at=m.hidden_at, hidden_by=m.hidden_by)
             for m in rows]  # fmt: skip
    return HiddenPage(items=items, next_cursor=rows[-1].seq if more else None)


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


_messages = Message.__table__
_conversations = Conversation.__table__


def _message_not_found(message_id: str) -> NotFound:
    return NotFound(f"message {message_id} not found", code="message_not_found")


def _live(conversation_id: str, message_id: str) -> tuple[Any, ...]:
    """The WHERE of a write to a visible message of this conversation."""
    c = _messages.c
    return c.id == message_id, c.conversation_id == conversation_id, c.deleted_at.is_(None)


async def edit_message(
    session: AsyncSession, owner_id: str, conversation_id: str, message_id: str, content: str, limits: Limits
) -> MessageOut:
    """One conditional ``UPDATE``: a message deleted meanwhile (by a request racing this one) is
    not edited, and the edit answers 404 like any edit of a deleted message."""
    check_content(content, limits)
    await get_owned(session, owner_id, conversation_id)
    await session.commit()  # end the read: the update opens the write transaction
    now = utcnow()
    row = (await session.execute(
        update(_messages).where(*_live(conversation_id, message_id))
        .values(content=content, content_hash=content_hash(content), edited_at=now)
        .returning(*_messages.c)
    )).mappings().first()  # fmt: skip
    if row is None:
        await session.rollback()
        raise _message_not_found(message_id)
    await versions.edited(session, message_id, row["selected_version"], content)
    await session.commit()
    return to_out(Message(**{**row, "edited_at": now}))


async def delete_message(session: AsyncSession, owner_id: str, conversation_id: str, message_id: str) -> None:
    """Soft delete: the row stays (decision history refers to it) but it leaves the visible history
    and the conversation's ``message_count``.

    Race-free: the soft delete is a conditional ``UPDATE … WHERE deleted_at IS NULL``, and only
    the request whose update matched the row decrements the count, in the same transaction. Of
    concurrent DELETEs of one message (on any server process) exactly one answers 204 and moves
    the count; the others find it deleted: 404 ``message_not_found``. (PostgreSQL: the second
    update waits for the first's row lock and re-checks ``deleted_at``; SQLite: writers are
    serialised by the database write lock, which the update takes before it reads the row.)"""
    await get_owned(session, owner_id, conversation_id)
    await session.commit()  # end the read: the conditional update opens the write transaction
    done = await session.execute(update(_messages).where(*_live(conversation_id, message_id)).values(deleted_at=utcnow()))
    if done.rowcount != 1:
        await session.rollback()
        raise _message_not_found(message_id)
    await session.execute(
        update(_conversations).where(_conversations.c.id == conversation_id)
        .values(message_count=_conversations.c.message_count - 1)
    )  # fmt: skip
    await session.commit()
