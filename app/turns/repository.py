"""Turn persistence. Every cross-request rule lives in the database:

* one running turn per conversation: ``turns.running_lock`` is unique and holds the conversation
  id while a turn runs, so a second server process gets the same 409 as this one;
* idempotency: ``(conversation_id, idempotency_key)`` is unique;
* the user message and the turn row are written in one transaction.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.conversations.service import get_owned
from app.db.models import Conversation, Message, Turn, new_id, utcnow
from app.errors import Conflict
from app.messages.store import insert_message

RETRY_AFTER_S = 2


class TurnInProgress(Conflict):
    code = "turn_in_progress"

    def __init__(self, turn_id: str | None) -> None:
        super().__init__(
            "another turn is still running in this conversation; retry when it has finished",
            details={"runningTurnId": turn_id, "retryAfterS": RETRY_AFTER_S},
        )
        self.retryable = True


class StartedTurn:
    def __init__(self, turn: Turn, user_message: Message | None, conversation: Conversation, replay: bool) -> None:
        self.turn = turn
        self.user_message = user_message
        self.conversation = conversation
        self.replay = replay


async def _by_key(session: AsyncSession, conversation_id: str, key: str) -> Turn | None:
    return await session.scalar(
        select(Turn).where(Turn.conversation_id == conversation_id, Turn.idempotency_key == key)
    )


async def _release_stale(session: AsyncSession, conversation_id: str, stale_after_s: float) -> None:
    """A turn still 'running' long after the turn timeout belongs to a crashed process."""
    cutoff = utcnow() - timedelta(seconds=stale_after_s)
    await session.execute(
        update(Turn)
        .where(Turn.running_lock == conversation_id, Turn.created_at < cutoff)
        .values(status="failed", running_lock=None, completed_at=utcnow(),
                error={"code": "turn_abandoned", "message": "the process running this turn stopped"})
    )  # fmt: skip
    await session.commit()


async def start_turn(
    sessions: async_sessionmaker[AsyncSession],
    owner_id: str,
    conversation_id: str,
    content: str,
    idempotency_key: str | None,
    *,
    stale_after_s: float,
) -> StartedTurn:
    async with sessions() as session:
        conv = await get_owned(session, owner_id, conversation_id)
        if idempotency_key and (found := await _by_key(session, conversation_id, idempotency_key)):
            message = await session.get(Message, found.user_message_id) if found.user_message_id else None
            return StartedTurn(found, message, conv, replay=True)
        await session.commit()
        await _release_stale(session, conversation_id, stale_after_s)
        turn = Turn(
            id=new_id(), conversation_id=conversation_id, owner_id=owner_id, status="running",
            idempotency_key=idempotency_key, running_lock=conversation_id,
        )  # fmt: skip
        session.add(turn)
        try:
            await session.flush()
            message = await insert_message(session, conversation_id, role="user", content=content, turn_id=turn.id)
            turn.user_message_id = message.id
            await session.commit()
        except IntegrityError:
            await session.rollback()
            if idempotency_key and (found := await _by_key(session, conversation_id, idempotency_key)):
                message = await session.get(Message, found.user_message_id) if found.user_message_id else None
                return StartedTurn(found, message, conv, replay=True)
            running = await session.scalar(select(Turn.id).where(Turn.running_lock == conversation_id))
            raise TurnInProgress(running) from None
        await session.refresh(conv)
        return StartedTurn(turn, message, conv, replay=False)


async def finish_turn(
    sessions: async_sessionmaker[AsyncSession],
    turn_id: str,
    *,
    status: str,
    result: dict[str, Any] | None,
    error: dict[str, Any] | None,
    intent: dict[str, Any] | None,
    emotion: dict[str, Any] | None,
    timings: dict[str, Any],
    usage: dict[str, Any],
) -> None:
    async with sessions() as session:
        await session.execute(
            update(Turn)
            .where(Turn.id == turn_id)
            .values(status=status, running_lock=None, result=result, error=error, intent=intent, emotion=emotion,
                    timings=timings, usage=usage, completed_at=utcnow())
        )  # fmt: skip
        await session.commit()


async def load_turn(session: AsyncSession, owner_id: str, conversation_id: str, turn_id: str) -> Turn:
    from app.errors import NotFound

    await get_owned(session, owner_id, conversation_id)
    turn = await session.get(Turn, turn_id)
    if turn is None or turn.conversation_id != conversation_id:
        raise NotFound(f"turn {turn_id} not found", code="turn_not_found")
    return turn
