"""Saving one reply the moment it passed its checks: the message, its stage metrics and its
quality events in one transaction (so a crash right after leaves a consistent record), the
plugins' metadata in the same write."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.models import Message, Turn, new_id
from app.messages.store import insert_message
from app.turns import records
from app.turns.plugins import ActorPrep, StageMetric, TurnInfo, TurnPlugin
from app.turns.replies import Reply
from app.turns.result import MessageMetadata

Preps = list[tuple[TurnPlugin, ActorPrep]]


async def save_reply(
    sessions: async_sessionmaker[AsyncSession], info: TurnInfo, reply: Reply, meta: MessageMetadata, preps: Preps,
    metrics: list[StageMetric],
) -> Message:
    """``metrics`` get the plugins' rows appended (they are part of the turn's record)."""
    message_id = new_id()
    metadata = meta.to_json()
    for plugin, prep in preps:
        extras = await plugin.reply_ready(info, reply.agent_id, prep, message_id, reply.text)
        metadata.update(extras.metadata)
        metrics.extend(extras.metrics)
    async with sessions() as session:
        message = await insert_message(
            session, info.conversation_id, role="agent", content=reply.text, agent_id=reply.agent_id,
            turn_id=info.turn_id, reply_kind=reply.kind, respond_to_agent_id=reply.respond_to_agent_id,
            metadata=metadata, message_id=message_id,
        )  # fmt: skip
        await records.write_records(
            session, decisions=[], metrics=[m.row(info.turn_id, info.conversation_id) for m in metrics],
            quality=records.quality_rows(info.turn_id, info.conversation_id, [reply]),
        )  # fmt: skip
        await session.commit()
    patch: dict[str, Any] = {}
    for plugin, prep in preps:  # e.g. the Story's compare-and-swap, now that the message exists
        patch.update(await plugin.reply_saved(info, reply.agent_id, prep, message) or {})
    if patch:  # only when a plugin's outcome differs from what it announced (a rare failure path)
        async with sessions() as session:
            row = await session.get(Message, message.id)
            row.metadata_json = {**row.metadata_json, **patch}
            await session.commit()
            message = row
    return message


async def record_dropped(sessions: async_sessionmaker[AsyncSession], info: TurnInfo, reply: Reply,
                         metrics: list[StageMetric]) -> None:  # fmt: skip
    async with sessions() as session:
        await records.write_records(
            session, decisions=[], metrics=[m.row(info.turn_id, info.conversation_id) for m in metrics],
            quality=records.quality_rows(info.turn_id, info.conversation_id, [reply]),
        )  # fmt: skip
        await session.commit()


async def merge_turn_result(sessions: async_sessionmaker[AsyncSession], turn_id: str, extra: dict[str, Any]) -> None:
    """Late parts of a turn's result (its suggestions) join the stored result."""
    async with sessions() as session:
        turn = await session.get(Turn, turn_id)
        if turn is not None and turn.result is not None:
            await session.execute(update(Turn).where(Turn.id == turn_id).values(result={**turn.result, **extra}))
            await session.commit()
