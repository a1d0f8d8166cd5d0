"""``POST /v1/conversations/{id}/continue``: a character carries on without a new user message.

The same turn machinery as ``…/turns`` (lock, lease, idempotency, events, Story with the seed's
Continue action), without the user message: in a group the given agent or the scorer's pick
replies, in a direct conversation its agent. JSON, or SSE with ``Accept: text/event-stream``.
"""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, Response, post
from litestar.datastructures import State
from msgspec import Meta
from sqlalchemy import select

from app.api.schemas import ApiInput
from app.auth.tokens import Principal
from app.conversations.service import get_owned
from app.db.models import ConversationMember
from app.errors import ValidationFailed
from app.turns import loader
from app.turns.controller import respond, start_or_replay, wants_stream


class ContinueCreate(ApiInput):
    agent_id: Annotated[str, Meta(min_length=1, max_length=64)] | None = None
    idempotency_key: Annotated[str, Meta(min_length=1, max_length=128)] | None = None


class ContinueController(Controller):
    path = "/v1/conversations/{conversation_id:str}/continue"
    tags = ["turns"]

    @post("/")
    async def create(self, conversation_id: str, request: Request, principal: Principal, state: State,
                     data: ContinueCreate | None = None) -> Response[Any]:  # fmt: skip
        data = data or ContinueCreate()
        return await carry_on(conversation_id, request, principal, state, data.agent_id, data.idempotency_key)


class SpeakCreate(ApiInput):
    idempotency_key: Annotated[str, Meta(min_length=1, max_length=128)] | None = None


class SpeakController(Controller):
    """Force-talk: ``POST /v1/conversations/{id}/members/{agentId}/speak`` — that member replies
    now, without a user message, muted or not (a Continue naming the agent, as a member action)."""

    path = "/v1/conversations/{conversation_id:str}/members/{agent_id:str}/speak"
    tags = ["turns"]

    @post("/")
    async def create(self, conversation_id: str, agent_id: str, request: Request, principal: Principal, state: State,
                     data: SpeakCreate | None = None) -> Response[Any]:  # fmt: skip
        data = data or SpeakCreate()
        return await carry_on(conversation_id, request, principal, state, agent_id, data.idempotency_key)


async def carry_on(conversation_id: str, request: Request, principal: Principal, state: State, agent_id: str | None,
                   idempotency_key: str | None) -> Response[Any]:  # fmt: skip
    """One turn without a user message: ``agent_id`` replies, else the scorer's pick (never a muted member)."""
    async with state.sessions() as session:
        conv = await get_owned(session, principal.user_id, conversation_id)
        if agent_id is not None and not await _is_member(session, conv.id, agent_id):
            raise ValidationFailed(f"agent {agent_id} is not a member of this conversation",
                                   code="agent_not_member", details={"agentId": agent_id})  # fmt: skip
        if await loader.last_user_message(session, conv.id) is None:
            raise ValidationFailed("there is nothing to continue: the conversation has no user message yet",
                                   code="nothing_to_continue")  # fmt: skip
    started = await start_or_replay(state, principal, conversation_id, None, idempotency_key,
                                    streamed=wants_stream(request))  # fmt: skip
    if isinstance(started, Response):
        return started
    return await respond(request, state, started, continue_agent_id=agent_id)


async def _is_member(session: Any, conversation_id: str, agent_id: str) -> bool:
    found = await session.scalar(select(ConversationMember.id).where(
        ConversationMember.conversation_id == conversation_id, ConversationMember.agent_id == agent_id))  # fmt: skip
    return found is not None


__all__ = ["ContinueController", "ContinueCreate", "SpeakController", "SpeakCreate", "carry_on"]
