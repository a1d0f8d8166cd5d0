"""Versions of an agent message (issue 27): regenerate adds one, a swipe selects another.

The message row always carries the **selected** version's text (``content``, ``content_hash``,
``selected_version``), so every reader that reads the row (the actor's transcript, the Story's
adoption of saved prose, suggestions, analytics) sees the selected version without knowing that
versions exist: the row *is* the one query. ``message_versions`` keeps every version (text, when,
model, why it exists, its own metadata). A message that was never regenerated has no rows and one
implicit version (``selectedVersion`` null); its first regeneration stores the original as
version 1 and the new reply as version 2.

Selecting a version is an edit for the Story: the row's content and hash change and
``edited_at`` is set, so the next turn sees a different hash than the one it adopted and adopts
the selected text itself, exactly as it adopts an edited reply.

At most ``limits.max_message_versions`` versions per message: past it a regeneration is a 409
``version_limit_reached`` (checked before the turn lock is taken, and again when storing).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.conversations.service import get_owned
from app.db.models import Message, MessageVersion, new_id, utcnow
from app.errors import Conflict, NotFound
from app.messages.controls import record_control
from app.messages.schemas import MessageVersionOut, MessageVersions
from app.messages.store import content_hash

ORIGINAL, REGENERATE = "original", "regenerate"


class VersionLimitReached(Conflict):
    code = "version_limit_reached"

    def __init__(self, message_id: str, limit: int) -> None:
        super().__init__(
            f"message {message_id} already has {limit} versions, the most it may keep",
            details={"messageId": message_id, "limit": limit},
        )


def _not_found(message_id: str) -> NotFound:
    return NotFound(f"message {message_id} not found", code="message_not_found")


async def count(session: AsyncSession, message: Message) -> int:
    """How many versions the message has (1 when it was never regenerated)."""
    if message.selected_version is None:
        return 1
    return int(await session.scalar(select(func.count()).where(MessageVersion.message_id == message.id)) or 1)


async def check_room(session: AsyncSession, message: Message, limit: int) -> None:
    if await count(session, message) >= limit:
        raise VersionLimitReached(message.id, limit)


def _row(message: Message, number: int, content: str, *, model: str | None, reason: str,
         metadata: dict[str, Any]) -> MessageVersion:  # fmt: skip
    return MessageVersion(id=new_id(), message_id=message.id, conversation_id=message.conversation_id, number=number,
                          content=content, content_hash=content_hash(content), model=model, reason=reason,
                          metadata_json=metadata, created_at=utcnow())  # fmt: skip


async def add(session: AsyncSession, message: Message, content: str, *, model: str | None, reason: str,
              metadata: dict[str, Any], limit: int) -> int:  # fmt: skip
    """Store a new version of ``message`` (read in this transaction) and return its number; the
    caller points the row at it. The first one also stores the original as version 1."""
    await check_room(session, message, limit)
    if message.selected_version is None:
        first = message.metadata_json or {}
        session.add(_row(message, 1, message.content, model=first.get("model"), reason=ORIGINAL,
                         metadata={"createdAt": message.created_at.isoformat() if message.created_at else None}))  # fmt: skip
        number = 2
    else:
        number = int(await session.scalar(
            select(func.max(MessageVersion.number)).where(MessageVersion.message_id == message.id)) or 1) + 1  # fmt: skip
    session.add(_row(message, number, content, model=model, reason=reason, metadata=metadata))
    await session.flush()
    return number


async def edited(session: AsyncSession, message_id: str, number: int | None, content: str) -> None:
    """An edit of a versioned message edits its selected version too (a swipe back keeps it)."""
    if number is None:
        return
    await session.execute(
        update(MessageVersion).where(MessageVersion.message_id == message_id, MessageVersion.number == number)
        .values(content=content, content_hash=content_hash(content))
    )  # fmt: skip


def _out(row: MessageVersion, selected: int) -> MessageVersionOut:
    return MessageVersionOut(number=row.number, content=row.content, content_hash=row.content_hash, model=row.model,
                             reason=row.reason, metadata=row.metadata_json, created_at=row.created_at,
                             selected=row.number == selected)  # fmt: skip


async def _visible(session: AsyncSession, conversation_id: str, message_id: str) -> Message:
    message = await session.get(Message, message_id, populate_existing=True)
    if message is None or message.conversation_id != conversation_id or message.deleted_at is not None:
        raise _not_found(message_id)
    return message


async def list_versions(session: AsyncSession, owner_id: str, conversation_id: str, message_id: str) -> MessageVersions:
    await get_owned(session, owner_id, conversation_id)
    message = await _visible(session, conversation_id, message_id)
    if message.selected_version is None:
        implicit = MessageVersionOut(number=1, content=message.content, content_hash=message.content_hash,
                                     model=(message.metadata_json or {}).get("model"), reason=ORIGINAL, metadata={},
                                     created_at=message.created_at, selected=True)  # fmt: skip
        return MessageVersions(message_id=message.id, selected=1, items=[implicit])
    rows = await session.scalars(
        select(MessageVersion).where(MessageVersion.message_id == message.id).order_by(MessageVersion.number))
    return MessageVersions(message_id=message.id, selected=message.selected_version,
                           items=[_out(r, message.selected_version) for r in rows])  # fmt: skip


async def select_version(session: AsyncSession, owner_id: str, conversation_id: str, message_id: str,
                         number: int) -> tuple[Message, int]:  # fmt: skip
    """Point the message at version ``number``: one conditional ``UPDATE`` on the row as read (a
    concurrent regeneration or edit makes it a 409 ``message_changed``). Returns the message and
    the version it had selected before; commits, with a ``select`` control row for analytics."""
    await get_owned(session, owner_id, conversation_id)
    message = await _visible(session, conversation_id, message_id)
    before = message.selected_version or 1
    if message.selected_version is None and number == 1:
        return message, before  # the one implicit version is already selected
    version = await session.scalar(
        select(MessageVersion).where(MessageVersion.message_id == message_id, MessageVersion.number == number))
    if version is None:
        raise NotFound(f"message {message_id} has no version {number}", code="version_not_found",
                               details={"messageId": message_id, "version": number})  # fmt: skip
    if number == before:
        return message, before
    await session.commit()  # end the read: the conditional update opens the write transaction
    m = Message.__table__.c
    now = utcnow()
    values = {"content": version.content, "content_hash": version.content_hash, "selected_version": number,
              "edited_at": now}  # fmt: skip
    done = await session.execute(
        update(Message.__table__).where(m.id == message_id, m.content_hash == message.content_hash,
                                        m.deleted_at.is_(None)).values(**values)
    )  # fmt: skip
    if done.rowcount != 1:
        await session.rollback()
        raise Conflict(f"message {message_id} changed while its version was switched", code="message_changed")
    await record_control(session, conversation_id, "select", agent_id=message.agent_id, message_id=message_id,
                         details={"from": before, "to": number, "back": number < before})  # fmt: skip
    await session.commit()
    for key, value in values.items():
        setattr(message, key, value)
    return message, before
