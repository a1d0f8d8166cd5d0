"""Regenerate an agent message: the plain actor path (persona + transcript + the user message it
answered), the same quality check, no Story prepare or write (issue: Story state only advances on
turns). The message keeps its id and seq; the new reply is a new version of it (issue 27,
``app.messages.versions``: the earlier ones are kept, the new one is selected), its content, hash
and ``edited_at`` change, and its metadata records the regeneration.

A regeneration holds its conversation's turn lock, exactly as a turn does (issue 33 item 8): it
runs as a turn row without a user message (``repository.start_turn``), under the lease heartbeat,
with its writes fenced (``app.db.fence``), and ends the row with ``repository.finish_turn`` on
every way out (done, rejected, a model error, the timeout, cancellation). So while it runs, a turn,
a Continue or another regeneration in the conversation gets the usual 409 ``turn_in_progress``,
from any server process; and a regeneration whose process died holds nothing once its lease
lapses. Its row says what it was: the stored result (``GET …/turns/{id}``) has
``kind: "regenerate"`` and the id of the message it rewrote (``regeneratedMessageId``); it writes
no decision rows, stage metrics or Story state, so analytics never counts it as a turn. (While it
runs, the row looks like a running Continue: no user message, no replies yet. Its end is counted
in ``companion_turns`` like any turn row's, by ``finish_turn`` or the reaper.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

import msgspec
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.conversations.service import get_owned
from app.db import fence
from app.db.models import Conversation, Message, utcnow
from app.db.outage import as_unavailable
from app.errors import Conflict, ModelTimeout, NotFound, ValidationFailed
from app.messages import versions
from app.messages.controls import record_control
from app.messages.service import to_json as message_json
from app.messages.store import content_hash
from app.events.hub import EventHub
from app.turns import loader, reaper, repository
from app.turns.actor_prompt import actor_prompt, add_lore
from app.conversations.settings import ConversationSettings
from app.lore.service import entries_for_turn
from app.turns.pipeline import TurnPipeline
from app.turns.replies import Reply, generate_checked
from app.turns.result import TurnResult, usage_dict
from app.turns.stages import error_record
from scheduling.presence import DEFAULT_HISTORY, Presence

log = logging.getLogger("app.turns")
KIND = "regenerate"
MAX_HISTORY = 10  # ``metadata.regenerations`` keeps the last ten


class Target(msgspec.Struct, kw_only=True):
    """What a regeneration needs, read in one session."""

    message: Message
    conversation: Conversation
    user_message: Message


async def _target(session: AsyncSession, owner_id: str, conversation_id: str, message_id: str) -> Target:
    conv = await get_owned(session, owner_id, conversation_id)
    message = await session.get(Message, message_id, populate_existing=True)
    if message is None or message.conversation_id != conversation_id or message.deleted_at is not None:
        raise NotFound(f"message {message_id} not found", code="message_not_found")
    if message.role != "agent" or message.agent_id is None:
        raise ValidationFailed("only agent messages can be regenerated", code="not_an_agent_message")
    user_msg = await session.scalar(
        select(Message).where(Message.conversation_id == conversation_id, Message.role == "user",
                              Message.seq < message.seq, Message.deleted_at.is_(None))
        .order_by(Message.seq.desc()).limit(1)
    )  # fmt: skip
    if user_msg is None:
        raise ValidationFailed("there is no user message before this agent message", code="no_user_turn")
    return Target(message=message, conversation=conv, user_message=user_msg)


async def regenerate(pipeline: TurnPipeline, hub: EventHub, owner_id: str, conversation_id: str,
                     message_id: str) -> Message:  # fmt: skip
    """Check (404/422 before any lock), take the conversation's turn lock (409 while anything runs
    there), regenerate, and end the turn row whichever way it goes."""
    async with pipeline.sessions() as session:
        target = await _target(session, owner_id, conversation_id, message_id)
        await versions.check_room(session, target.message, pipeline.settings.limits.max_message_versions)
    started = await repository.start_turn(pipeline.sessions, owner_id, conversation_id, None, None,
                                          stale_after_s=pipeline.settings.turn_timeout_s * 2, trigger=KIND)  # fmt: skip
    await reaper.announce(hub, started.abandoned)  # the dead turn this one took over
    message = await run(pipeline, started, owner_id, message_id)
    await hub.append(conversation_id, started.turn.id, [("message.version_added", {
        "conversationId": conversation_id, "messageId": message.id, "agentId": message.agent_id,
        "selected": message.selected_version, "message": message_json(message),
    })])  # fmt: skip
    return message


async def run(pipeline: TurnPipeline, started: repository.StartedTurn, owner_id: str, message_id: str) -> Message:
    """The regeneration under the lock ``started`` holds; the lock is released however it ends."""
    turn = started.turn
    began = time.perf_counter()
    reply: Reply | None = None
    with fence.fenced(turn.id):
        try:
            async with repository.lease_heartbeat(pipeline.sessions, turn.id):
                async with asyncio.timeout(pipeline.settings.turn_timeout_s):
                    reply, message = await _regenerate(pipeline, owner_id, turn.conversation_id, message_id)
        except BaseException as exc:  # noqa: BLE001 - recorded on the turn row, then raised
            raised, record = _outcome(exc, pipeline.settings.turn_timeout_s)
            await _finish(pipeline, started, message_id, reply, None, began, record)
            if raised is not exc:
                raise raised from None
            raise
        await _finish(pipeline, started, message_id, reply, message, began, None)
        return message


def _outcome(exc: BaseException, timeout_s: float) -> tuple[BaseException, dict[str, Any]]:
    """What the caller gets and what the turn row records."""
    if isinstance(exc, TimeoutError):
        timeout = ModelTimeout(f"the regeneration exceeded {timeout_s}s", code="turn_timeout")
        return timeout, error_record(timeout)
    if isinstance(exc, asyncio.CancelledError):
        return exc, {"code": "regeneration_cancelled", "message": "the regeneration was cancelled (the server is stopping)"}
    return exc, error_record(as_unavailable(exc) or exc)


async def _regenerate(pipeline: TurnPipeline, owner_id: str, conversation_id: str, message_id: str) -> tuple[Reply, Message]:
    async with pipeline.sessions() as session:  # read again under the lock: what is rewritten is current
        target = await _target(session, owner_id, conversation_id, message_id)
        message, conv, user_msg = target.message, target.conversation, target.user_message
        agents = await loader.load_agents(session, conversation_id)
        lore = await entries_for_turn(session, conversation_id, agents.rows)
        recent = await loader.recent_messages(session, conversation_id, pipeline.settings.recent_window,
                                              before_seq=user_msg.seq)  # fmt: skip
        siblings = list(await session.scalars(
            select(Message.content).where(Message.conversation_id == conversation_id, Message.role == "agent",
                                          Message.seq > user_msg.seq, Message.id != message.id,
                                          Message.deleted_at.is_(None))
        ))  # fmt: skip
    agent = agents.rows.get(message.agent_id)
    if agent is None:
        raise ValidationFailed("the agent is no longer a member of this conversation", code="agent_not_member")
    presence = Presence(mode=conv.settings.get("history", DEFAULT_HISTORY), joined=agents.joined)
    prompt = actor_prompt(pipeline.templates, agent, language=conv.settings["language"],
                          recent=presence.window(recent, agent.id),
                          names={p.id: p.name for p in agents.profiles}, user_text=user_msg.content,
                          direct=conv.kind == "direct")  # fmt: skip
    budget = msgspec.convert(conv.settings or {}, ConversationSettings).lore.token_budget
    prompt = add_lore(prompt, lore, agent_id=agent.id, token_budget=budget)
    reply = await generate_checked(pipeline.model, prompt, agent, max_chars=pipeline.settings.limits.max_message_chars,
                                   earlier_replies=[*siblings, message.content])  # fmt: skip
    if reply.dropped:
        raise ValidationFailed("the regenerated reply failed the quality check twice", code="regeneration_rejected",
                               details={"problems": reply.problems})  # fmt: skip
    return reply, await _store(pipeline, conversation_id, message_id, reply)


async def _store(pipeline: TurnPipeline, conversation_id: str, message_id: str, reply: Reply) -> Message:
    """A fenced write (nothing is stored once the lease is lost); 404 if the message was deleted
    meanwhile. The history is appended to the row as it is when written: the update is a
    compare-and-swap on the content hash (SQLite reads before it takes the write lock; PostgreSQL
    also holds the row ``FOR UPDATE``), read again if an edit landed in between."""
    m = Message.__table__.c
    for _ in range(5):
        async with pipeline.sessions() as session:
            row = await session.scalar(
                select(Message).where(Message.id == message_id, Message.conversation_id == conversation_id,
                                      Message.deleted_at.is_(None)).with_for_update()
            )  # fmt: skip
            if row is None:
                raise NotFound(f"message {message_id} not found", code="message_not_found")
            now = utcnow()
            history: list[Any] = list(row.metadata_json.get("regenerations") or [])
            history.append({"at": now.isoformat(), "previousContentHash": row.content_hash, "model": reply.model,
                            "usage": usage_dict(reply.usage), "attempts": reply.attempts})  # fmt: skip
            number = await versions.add(session, row, reply.text, model=reply.model, reason=versions.REGENERATE,
                                        metadata={"usage": usage_dict(reply.usage), "attempts": reply.attempts,
                                                  "lore": reply.lore},
                                        limit=pipeline.settings.limits.max_message_versions)  # fmt: skip
            values = {"content": reply.text, "content_hash": content_hash(reply.text), "edited_at": now,
                      "selected_version": number,
                      "metadata_json": {**row.metadata_json, "regenerations": history[-MAX_HISTORY:],
                                        "lore": reply.lore}}  # fmt: skip
            done = await session.execute(
                update(Message.__table__)
                .where(m.id == message_id, m.content_hash == row.content_hash, m.deleted_at.is_(None)).values(**values)
            )  # fmt: skip
            if done.rowcount == 1:
                await record_control(session, conversation_id, "regenerate", agent_id=row.agent_id, message_id=message_id,
                                     details={"version": number})  # fmt: skip
                await session.commit()
                for key, value in values.items():
                    setattr(row, key, value)
                return row
            await session.rollback()
    raise Conflict(f"message {message_id} kept changing while it was regenerated", code="message_changed")


async def _finish(pipeline: TurnPipeline, started: repository.StartedTurn, message_id: str, reply: Reply | None,
                  message: Message | None, began: float, error: dict[str, Any] | None) -> None:  # fmt: skip
    """End the turn row (releases the lock); shielded, so a cancelled request still releases it.
    A row another process already ended (lease lost) stays as that process left it."""
    status = "completed" if error is None else "failed"
    timings = {"total": round((time.perf_counter() - began) * 1000, 3)}
    usage = usage_dict(reply.usage) if reply is not None else {}
    result = TurnResult(
        turn_id=started.turn.id, status=status, conversation_id=started.conversation.id, user_message=None,
        agent_messages=[message_json(message)] if message is not None else [],
        orchestration={"regeneratedMessageId": message_id, "timings": timings, "usage": usage}, error=error,
    ).to_json()  # fmt: skip
    result = {**result, "kind": KIND, "regeneratedMessageId": message_id}
    finish = asyncio.ensure_future(repository.finish_turn(
        pipeline.sessions, started.turn.id, status=status, result=result, error=error, intent=None, emotion=None,
        timings=timings, usage=usage,
    ))  # fmt: skip
    try:
        await asyncio.shield(finish)
    except fence.LeaseLost:
        log.warning("regeneration %s: its lease was lost before it ended; the row stays abandoned", started.turn.id)
    except asyncio.CancelledError:
        finish.add_done_callback(_log_failure)  # it goes on; the lease covers it if it fails
        raise
    except Exception:  # noqa: BLE001 - the lease lapses and the reaper ends the row
        log.warning("regeneration %s: could not end its turn row", started.turn.id, exc_info=True)


def _log_failure(task: asyncio.Future[None]) -> None:
    with contextlib.suppress(asyncio.CancelledError):
        if (exc := task.exception()) is not None and not isinstance(exc, fence.LeaseLost):
            log.warning("regeneration: could not end its turn row: %s", exc)
