"""Regenerate an agent message: the plain actor path (persona + transcript + the user message it
answered), the same quality check, no Story prepare or write (issue: Story state only advances on
turns). The message keeps its id and seq; its content, hash and ``edited_at`` change, and its
metadata records the regeneration."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from app.db.models import Message, Turn, utcnow
from app.errors import NotFound, ValidationFailed
from app.messages.store import content_hash
from app.turns import loader, repository
from app.turns.pipeline import TurnPipeline
from app.turns.result import usage_dict
from app.turns.actor_prompt import actor_prompt
from app.turns.replies import generate_checked
from app.conversations.service import get_owned


async def regenerate(pipeline: TurnPipeline, owner_id: str, conversation_id: str, message_id: str) -> Message:
    async with pipeline.sessions() as session:
        conv = await get_owned(session, owner_id, conversation_id)
        message = await session.get(Message, message_id)
        if message is None or message.conversation_id != conversation_id or message.deleted_at is not None:
            raise NotFound(f"message {message_id} not found", code="message_not_found")
        if message.role != "agent" or message.agent_id is None:
            raise ValidationFailed("only agent messages can be regenerated", code="not_an_agent_message")
        # A crashed turn's stale lease is released here too; a live one answers with its real wait.
        await repository._release_stale(session, conversation_id, pipeline.settings.turn_timeout_s * 2)
        running = await session.scalar(select(Turn.id).where(Turn.running_lock == conversation_id))
        if running is not None:
            raise await repository._in_progress(session, conversation_id)
        user_msg = await session.scalar(
            select(Message).where(Message.conversation_id == conversation_id, Message.role == "user",
                                  Message.seq < message.seq, Message.deleted_at.is_(None))
            .order_by(Message.seq.desc()).limit(1)
        )  # fmt: skip
        if user_msg is None:
            raise ValidationFailed("there is no user message before this agent message", code="no_user_turn")
        agents = await loader.load_agents(session, conversation_id)
        recent = await loader.recent_messages(session, conversation_id, pipeline.settings.recent_window,
                                              before_seq=user_msg.seq)  # fmt: skip
        siblings = list(await session.scalars(
            select(Message.content).where(Message.conversation_id == conversation_id, Message.role == "agent",
                                          Message.seq > user_msg.seq, Message.id != message.id,
                                          Message.deleted_at.is_(None))
        ))  # fmt: skip
        language = conv.settings["language"]
    agent = agents.rows.get(message.agent_id)
    if agent is None:
        raise ValidationFailed("the agent is no longer a member of this conversation", code="agent_not_member")
    prompt = actor_prompt(pipeline.templates, agent, language=language, recent=recent,
                          names={p.id: p.name for p in agents.profiles}, user_text=user_msg.content,
                          direct=conv.kind == "direct")  # fmt: skip
    reply = await generate_checked(pipeline.model, prompt, agent, max_chars=pipeline.settings.limits.max_message_chars,
                                   earlier_replies=[*siblings, message.content])  # fmt: skip
    if reply.dropped:
        raise ValidationFailed("the regenerated reply failed the quality check twice", code="regeneration_rejected",
                               details={"problems": reply.problems})  # fmt: skip
    async with pipeline.sessions() as session:
        row = await session.get(Message, message_id)
        history: list[Any] = list(row.metadata_json.get("regenerations", []))
        history.append({"at": utcnow().isoformat(), "previousContentHash": row.content_hash, "model": reply.model,
                        "usage": usage_dict(reply.usage), "attempts": reply.attempts})  # fmt: skip
        row.content = reply.text
        row.content_hash = content_hash(reply.text)
        row.edited_at = utcnow()
        row.metadata_json = {**row.metadata_json, "regenerations": history[-10:]}
        await session.commit()
        return row
