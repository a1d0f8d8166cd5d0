"""Delete a conversation (issue 29): ``DELETE /v1/conversations/{id}``, owner only.

The conversation goes with everything that belongs to it (messages and their versions, turns,
decision rows, Story states, suggestions, events, lore, auto runs: every foreign key to
``conversations`` cascades). It holds the conversation's turn lock like a rewind
(``repository.start_turn`` without a user message): while a turn, a Continue or a regeneration
runs, on any server process, it is a 409 ``turn_in_progress``, and no turn can start meanwhile;
the lock's own turn row goes with the conversation. A running auto mode is a 409
``auto_mode_running`` (stop it first), so no runner is left driving a conversation that is gone.
"""

from __future__ import annotations

import asyncio

from sqlalchemy import delete, select

from app.conversations.service import get_owned
from app.db.models import AutoRun, Conversation
from app.errors import Conflict
from app.turns import reaper, repository
from app.turns.pipeline import TurnPipeline
from app.turns.stages import error_record
from app.events.hub import EventHub


class AutoModeRunning(Conflict):
    code = "auto_mode_running"

    def __init__(self, conversation_id: str) -> None:
        super().__init__("auto mode is running in this conversation; stop it first (DELETE …/auto)",
                         details={"conversationId": conversation_id})  # fmt: skip


async def delete_conversation(pipeline: TurnPipeline, hub: EventHub, owner_id: str, conversation_id: str) -> None:
    async with pipeline.sessions() as session:
        await get_owned(session, owner_id, conversation_id)  # 404 before any lock
        if await session.scalar(select(AutoRun.id).where(AutoRun.running_lock == conversation_id)) is not None:
            raise AutoModeRunning(conversation_id)
    started = await repository.start_turn(pipeline.sessions, owner_id, conversation_id, None, None,
                                          stale_after_s=pipeline.settings.turn_timeout_s * 2)  # fmt: skip
    await reaper.announce(hub, started.abandoned)
    try:
        async with pipeline.sessions() as session:
            await session.execute(delete(Conversation).where(Conversation.id == conversation_id,
                                                             Conversation.owner_id == owner_id))  # fmt: skip
            await session.commit()
    except BaseException as exc:  # the lock's turn row is still there: end it (releases the lock)
        await asyncio.shield(repository.finish_turn(
            pipeline.sessions, started.turn.id, status="failed", result={"kind": "delete"}, error=error_record(exc),
            intent=None, emotion=None, timings={}, usage={}))  # fmt: skip
        raise
