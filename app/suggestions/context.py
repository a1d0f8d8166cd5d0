"""What the generator sees, read from the database — never from the request.

The anchor text is the SAVED content (an edit is honoured, a stale client copy cannot leak in);
the language is the conversation's setting (trusted, never guessed from the last message); the
context is strictly before the anchor, so suggestions answer the anchor as it stood.
"""

from __future__ import annotations

from typing import Any

import msgspec
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Agent, Conversation, Message, Turn
from app.errors import NotFound, ValidationFailed
from app.suggestions.errors import anchor_not_agent_message, anchor_without_user_turn
from story.auto_reply import (
    Anchor, AutoReplyConfig, AutoReplyConfigInvalid, ContextMessage, Guidance, SuggestionInput, validate_config,
)  # fmt: skip

USER_SPEAKER = "User"
_BOOKKEEPING = ("run", "source")  # how a stage ran, not what it understood


class Prepared(msgspec.Struct, kw_only=True):
    conversation_id: str
    anchor_message_id: str
    turn_id: str | None
    config: AutoReplyConfig
    input: SuggestionInput


def config_of(settings: dict[str, Any] | None) -> AutoReplyConfig:
    try:
        return validate_config((settings or {}).get("autoReply") or {})
    except AutoReplyConfigInvalid as exc:  # stored settings are validated on write; this is a guard
        raise ValidationFailed(str(exc), code="invalid_settings", details={"problems": exc.problems}) from None


async def prepare(
    session: AsyncSession, conv: Conversation, anchor_id: str, *, guidance: Guidance | None = None
) -> Prepared:
    """Check the anchor (404/422) and build the generator input. ``guidance`` overrides the
    anchor turn's saved intent/emotion (a running turn has not written them to its row yet)."""
    config = config_of(conv.settings)
    anchor = await session.get(Message, anchor_id, populate_existing=True)
    if anchor is None or anchor.conversation_id != conv.id or anchor.deleted_at is not None:
        raise NotFound(f"message {anchor_id} not found", code="message_not_found")
    if anchor.role != "agent":
        raise anchor_not_agent_message(anchor_id)
    before = (Message.conversation_id == conv.id, Message.seq < anchor.seq, Message.deleted_at.is_(None))
    latest_user = await session.scalar(
        select(Message).where(*before, Message.role == "user").order_by(Message.seq.desc()).limit(1)
    )
    if latest_user is None:
        raise anchor_without_user_turn(anchor_id)
    rows = list(await session.scalars(
        select(Message).where(*before, Message.content != "").order_by(Message.seq.desc())
        .limit(config.context_message_count)
    ))[::-1]  # fmt: skip
    agents = await _agents(session, {m.agent_id for m in [*rows, anchor] if m.agent_id})
    agent = agents.get(anchor.agent_id or "")
    context = [
        ContextMessage(speaker=_speaker(m, agents), role="user" if m.role == "user" else "agent", content=m.content, id=m.id)
        for m in rows
        if m.content.strip()
    ]  # fmt: skip
    inp = SuggestionInput(
        anchor=Anchor(
            id=anchor.id, content=anchor.content, agent_name=agent.name if agent else "the character",
            agent_description=(agent.description or agent.headline) if agent else "",
        ),
        language=str((conv.settings or {}).get("language") or "zh-CN"),
        latest_user_input=latest_user.content,
        context=context,
        guidance=guidance if guidance is not None else await _saved_guidance(session, anchor),
        pending_stage=_pending_stage(anchor.metadata_json or {}),
    )  # fmt: skip
    return Prepared(conversation_id=conv.id, anchor_message_id=anchor.id, turn_id=anchor.turn_id, config=config, input=inp)


def hint(value: Any) -> dict[str, Any] | None:
    """A stage record without its bookkeeping (``source``/``run``): the model needs the reading only."""
    if not isinstance(value, dict):
        return None
    return {k: v for k, v in value.items() if k not in _BOOKKEEPING} or None


async def _saved_guidance(session: AsyncSession, anchor: Message) -> Guidance | None:
    turn = await session.get(Turn, anchor.turn_id) if anchor.turn_id else None
    orchestration = (anchor.metadata_json or {}).get("orchestration") or {}
    emotion = hint(turn.emotion) if turn else None
    intent = hint(turn.intent) if turn and turn.intent else hint(orchestration.get("intent"))
    return Guidance(emotion=emotion, intent=intent) if (emotion or intent) else None


def _pending_stage(metadata: dict[str, Any]) -> str | None:
    """Story's planned next beat for this agent, when the Story feature recorded one
    (``metadata.story.pendingStage``); the prompt marks it as NOT YET HAPPENED."""
    story = metadata.get("story")
    stage = story.get("pendingStage") if isinstance(story, dict) else None
    return stage if isinstance(stage, str) and stage.strip() else None


async def _agents(session: AsyncSession, ids: set[str]) -> dict[str, Agent]:
    if not ids:
        return {}
    return {a.id: a for a in await session.scalars(select(Agent).where(Agent.id.in_(ids)))}


def _speaker(message: Message, agents: dict[str, Agent]) -> str:
    if message.role == "user":
        return USER_SPEAKER
    agent = agents.get(message.agent_id or "")
    return agent.name if agent else "Character"
