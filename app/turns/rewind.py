"""Rewind a conversation to a message (issue 27): ``POST …/conversations/{id}/rewind``.

Everything after the message leaves the conversation in one transaction: the later messages are
hidden, never deleted (``hidden_at``/``hidden_by`` = the rewind's control id, plus ``deleted_at``
so every reader of the visible history skips them as it skips a deleted message; an admin and
analytics tell the two apart by ``hidden_at``), the message count drops, open suggestions are
cleared, and each feature takes back what the hidden messages made (``history_rewound``: every
agent's Story goes back to its state at that message, ``app.story.rewind``). One ``rewind``
control row records it for analytics, with the removed replies per agent.

The rewind holds the conversation's turn lock like a regeneration (``repository.start_turn``
without a user message): while a turn, a Continue or a regeneration runs, on any server process,
it is a 409 ``turn_in_progress``, and no turn can start while it runs. Its turn row says what it
was (``kind: "rewind"``) and writes no decision rows, so analytics never counts it as a turn.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.api.schemas import ApiStruct
from app.conversations.service import get_owned
from app.db.models import Conversation, Message, new_id, utcnow
from app.errors import NotFound, StaleStateWrite
from app.events.hub import EventHub
from app.messages.controls import record_control
from app.turns import reaper, repository
from app.turns.pipeline import TurnPipeline
from app.turns.stages import error_record

KIND = "rewind"
STALE_RETRIES = 3


class RewindOut(ApiStruct):
    conversation_id: str
    to_message_id: str
    to_seq: int
    removed_messages: int
    removed_message_ids: list[str]
    removed_by_agent: dict[str, int]
    story: list[dict[str, Any]] = []  # per agent: "restored" (revision, atSeq) or "reinitialised" (reason)
    suggestions_cleared: int = 0
    rewind_id: str = ""  # the control row; also ``hidden_by`` of every removed message


async def _target(session: AsyncSession, conversation_id: str, message_id: str) -> Message:
    message = await session.get(Message, message_id, populate_existing=True)
    if message is None or message.conversation_id != conversation_id or message.deleted_at is not None:
        raise NotFound(f"message {message_id} not found", code="message_not_found")
    return message


async def rewind(pipeline: TurnPipeline, hub: EventHub, owner_id: str, conversation_id: str,
                 to_message_id: str) -> RewindOut:  # fmt: skip
    """Check (404 before any lock), take the turn lock (409 while anything runs), rewind, and end
    the turn row whichever way it goes."""
    async with pipeline.sessions() as session:
        await get_owned(session, owner_id, conversation_id)
        await _target(session, conversation_id, to_message_id)
    started = await repository.start_turn(pipeline.sessions, owner_id, conversation_id, None, None,
                                          stale_after_s=pipeline.settings.turn_timeout_s * 2)  # fmt: skip
    await reaper.announce(hub, started.abandoned)
    began, out, error = time.perf_counter(), None, None
    try:
        for attempt in range(STALE_RETRIES + 1):
            try:
                out = await _rewind(pipeline, owner_id, started.turn.id, conversation_id, to_message_id)
                break
            except StaleStateWrite:  # a Story write of the last turn landed meanwhile: read again
                if attempt == STALE_RETRIES:
                    raise
    except BaseException as exc:  # noqa: BLE001 - recorded on the turn row, then raised
        error = error_record(exc)
        raise
    finally:
        await _finish(pipeline, started, out, began, error)
    await hub.append(conversation_id, started.turn.id, [("conversation.rewound", {
        "conversationId": conversation_id, "toMessageId": out.to_message_id, "toSeq": out.to_seq,
        "removedMessageIds": out.removed_message_ids, "story": out.story, "rewindId": out.rewind_id,
    })])  # fmt: skip
    return out


async def _rewind(pipeline: TurnPipeline, owner_id: str, turn_id: str, conversation_id: str,
                  to_message_id: str) -> RewindOut:  # fmt: skip
    async with pipeline.sessions() as session:  # read again under the lock: what is removed is current
        target = await _target(session, conversation_id, to_message_id)
        later = (await session.execute(
            select(Message.id, Message.agent_id, Message.role).where(
                Message.conversation_id == conversation_id, Message.seq > target.seq, Message.deleted_at.is_(None))
            .order_by(Message.seq)
        )).all()  # fmt: skip
        rewind_id, now = new_id(), utcnow()
        ids = [row.id for row in later]
        by_agent: dict[str, int] = {}
        for row in later:
            if row.role == "agent" and row.agent_id:
                by_agent[row.agent_id] = by_agent.get(row.agent_id, 0) + 1
        if ids:
            await session.execute(update(Message).where(Message.id.in_(ids), Message.deleted_at.is_(None))
                                  .values(hidden_at=now, hidden_by=rewind_id, deleted_at=now)
                                  .execution_options(synchronize_session=False))  # fmt: skip
            await session.execute(update(Conversation).where(Conversation.id == conversation_id)
                                  .values(message_count=Conversation.message_count - len(ids)))  # fmt: skip
        report = await pipeline.history_rewound(session, conversation_id, to_message_id=target.id,
                                                to_seq=target.seq, by=owner_id)  # fmt: skip
        details = {"toSeq": target.seq, "removedMessages": len(ids), "removedByAgent": by_agent, "rewindId": rewind_id,
                   "story": [{"agentId": s["agentId"], "action": s["action"]} for s in report.get("story", [])]}
        await record_control(session, conversation_id, KIND, message_id=target.id, turn_id=turn_id, details=details)
        await session.commit()
    return RewindOut(conversation_id=conversation_id, to_message_id=target.id, to_seq=target.seq,
                     removed_messages=len(ids), removed_message_ids=ids, removed_by_agent=by_agent,
                     story=report.get("story", []), suggestions_cleared=report.get("suggestionsCleared", 0),
                     rewind_id=rewind_id)  # fmt: skip


async def _finish(pipeline: TurnPipeline, started: repository.StartedTurn, out: RewindOut | None, began: float,
                  error: dict[str, Any] | None) -> None:  # fmt: skip
    """End the turn row (releases the lock); shielded, so a cancelled request still releases it."""
    status = "completed" if error is None else "failed"
    timings = {"total": round((time.perf_counter() - began) * 1000, 3)}
    result = {"turnId": started.turn.id, "status": status, "conversationId": started.conversation.id,
              "kind": KIND, "userMessage": None, "agentMessages": [], "error": error,
              "rewind": {"toMessageId": out.to_message_id, "removedMessages": out.removed_messages} if out else None}
    await asyncio.shield(repository.finish_turn(pipeline.sessions, started.turn.id, status=status, result=result,
                                                error=error, intent=None, emotion=None, timings=timings, usage={}))  # fmt: skip
