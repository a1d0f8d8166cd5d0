"""The Story library's view of the chat: saved messages by id, and the visible history.

Both read the ``messages`` table, never a request copy, so adoption and settlement see what the
database holds now: an edited reply counts with its saved text, a soft-deleted one is gone.
Reads are scoped to one conversation so a state can never adopt another conversation's message.
The history of one agent's Story is what that agent witnessed (presence, ``settings.history``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.models import Conversation, ConversationMember, Message
from scheduling.presence import DEFAULT_HISTORY, Presence
from story.coordinator.initializer import HISTORY_MESSAGES
from story.coordinator.recovery import HistoryMessage
from story.ports import SavedMessage

USER_NAME = "User"


class DbMessageReader:
    """``story.ports.MessageReader`` over the database; each read is its own short session."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], conversation_id: str) -> None:
        self.sessions, self.conversation_id = sessions, conversation_id

    async def read(self, message_ids: list[str]) -> dict[str, SavedMessage]:
        if not message_ids:
            return {}
        async with self.sessions() as session:
            rows = await session.execute(
                select(Message.id, Message.content, Message.agent_id, Message.deleted_at).where(
                    Message.conversation_id == self.conversation_id, Message.id.in_(set(message_ids))
                )
            )
            return {i: SavedMessage(i, c, a, d is not None) for i, c, a, d in rows}


def _history(row: Any, names: dict[str, str]) -> HistoryMessage:
    name = USER_NAME if row.role == "user" else names.get(row.agent_id or "", "agent")
    return HistoryMessage(row.id, row.role, row.content, row.agent_id, name)


async def presence_of(session: AsyncSession, conversation_id: str, agent_id: str) -> Presence:
    """The conversation's ``settings.history`` and the member's ``joined_seq`` (0 when it is gone)."""
    row = (await session.execute(
        select(Conversation.settings, ConversationMember.joined_seq)
        .outerjoin(ConversationMember, (ConversationMember.conversation_id == Conversation.id)
                   & (ConversationMember.agent_id == agent_id))
        .where(Conversation.id == conversation_id)
    )).first()  # fmt: skip
    if row is None:
        return Presence()
    settings, joined = row
    return Presence(mode=(settings or {}).get("history", DEFAULT_HISTORY), joined={agent_id: int(joined or 0)})


async def load_history(session: AsyncSession, conversation_id: str, before_seq: int, names: dict[str, str],
                       pending_message_id: str | None = None, *, agent_id: str | None = None) -> list[HistoryMessage]:
    """The last visible messages before ``before_seq``, oldest first; with ``agent_id``, only those
    that agent witnessed (presence: its Story never reads what was said before it joined).

    When the saved state waits for an older reply than the window reaches, that reply and the
    last visible user message before it are put in front, so the coordinator can check it
    without loading everything in between (the initializer only ever reads the newest 18).
    """
    cols = (Message.id, Message.role, Message.content, Message.agent_id, Message.seq, Message.present_agent_ids)
    visible = (Message.conversation_id == conversation_id, Message.deleted_at.is_(None))
    recent = list(reversed((await session.execute(
        select(*cols).where(*visible, Message.seq < before_seq).order_by(Message.seq.desc()).limit(HISTORY_MESSAGES)
    )).all()))  # fmt: skip
    if pending_message_id:
        recent = await _with_pending(session, cols, visible, recent, pending_message_id, before_seq)
    if agent_id is not None:
        presence = await presence_of(session, conversation_id, agent_id)
        recent = [r for r in recent if presence.sees(agent_id, seq=r.seq, author_id=r.agent_id if r.role == "agent" else None,
                                                     present=r.present_agent_ids)]  # fmt: skip
    return [_history(r, names) for r in recent]


async def _with_pending(session: AsyncSession, cols: tuple, visible: tuple, recent: list, pending_id: str,
                        before_seq: int) -> list:
    pending = next((r for r in recent if r.id == pending_id), None)
    front = []
    if pending is None:
        pending = (await session.execute(
            select(*cols).where(*visible, Message.id == pending_id, Message.seq < before_seq))).first()
        if pending is None:
            return recent
        front = [pending]
    if any(r.role == "user" and r.seq < pending.seq for r in recent):
        return front + recent
    user = (await session.execute(
        select(*cols).where(*visible, Message.role == "user", Message.seq < pending.seq)
        .order_by(Message.seq.desc()).limit(1)
    )).first()  # fmt: skip
    return ([user] if user is not None else []) + front + recent
