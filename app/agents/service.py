"""Agent catalogue: create, read, update, soft-delete."""

from __future__ import annotations

import msgspec
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.agents.schemas import AgentCreate, AgentOut, AgentUpdate
from app.conversations.settings import check_model_config
from app.db.models import Agent, ConversationMember, utcnow
from app.errors import Conflict, NotFound, ValidationFailed
from app.settings import Limits

_FIELDS = (
    "name", "headline", "description", "story_background", "personality_prompt", "tone_prompt",
    "guardrails_prompt", "default_prompt", "image_key", "aliases", "model_config_id",
)  # fmt: skip


def to_out(agent: Agent) -> AgentOut:
    return AgentOut(**{f: getattr(agent, f) for f in (*_FIELDS, "id", "capabilities", "created_at", "updated_at")})


_PROMPTS = ("headline", "description", "story_background", "personality_prompt", "tone_prompt",
            "guardrails_prompt", "default_prompt")  # fmt: skip


def _check_input(data: AgentCreate | AgentUpdate, limits: Limits) -> None:
    _check_prompt_lengths(data, limits)
    if isinstance(data.model_config_id, str):
        check_model_config("modelConfigId", data.model_config_id)


def _check_prompt_lengths(data: AgentCreate | AgentUpdate, limits: Limits) -> None:
    for field in _PROMPTS:
        value = getattr(data, field)
        if isinstance(value, str) and len(value) > limits.max_prompt_chars:
            raise ValidationFailed(
                f"{field} has {len(value)} characters; the limit is {limits.max_prompt_chars}",
                code="field_too_long", details={"field": field, "limit": limits.max_prompt_chars},
            )  # fmt: skip


def _clean_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise ValidationFailed("name must not be blank", details={"field": "name"})
    return name


def _clean_aliases(aliases: list[str]) -> list[str]:
    seen: dict[str, str] = {}
    for alias in aliases:
        alias = alias.strip()
        if alias:
            seen.setdefault(alias.casefold(), alias)
    return list(seen.values())


async def get_agent(session: AsyncSession, agent_id: str) -> Agent:
    agent = await session.get(Agent, agent_id)
    if agent is None or agent.deleted_at is not None:
        raise NotFound(f"agent {agent_id} not found", code="agent_not_found")
    return agent


async def create_agent(session: AsyncSession, data: AgentCreate, limits: Limits) -> AgentOut:
    _check_input(data, limits)
    values = {f: getattr(data, f) for f in _FIELDS}
    values["name"] = _clean_name(data.name)
    values["aliases"] = _clean_aliases(data.aliases)
    values["capabilities"] = msgspec.to_builtins(data.capabilities) if data.capabilities else None
    agent = Agent(**values)
    session.add(agent)
    await session.commit()
    return to_out(agent)


async def list_agents(session: AsyncSession) -> list[AgentOut]:
    rows = await session.scalars(select(Agent).where(Agent.deleted_at.is_(None)).order_by(Agent.created_at, Agent.id))
    return [to_out(a) for a in rows]


async def update_agent(session: AsyncSession, agent_id: str, data: AgentUpdate, limits: Limits) -> AgentOut:
    _check_input(data, limits)
    agent = await get_agent(session, agent_id)
    for field in _FIELDS:
        value = getattr(data, field)
        if value is msgspec.UNSET:
            continue
        if field == "name":
            value = _clean_name(value)
        elif field == "aliases":
            value = _clean_aliases(value)
        setattr(agent, field, value)
    if data.capabilities is not msgspec.UNSET:
        agent.capabilities = msgspec.to_builtins(data.capabilities) if data.capabilities else None
    agent.updated_at = utcnow()
    await session.commit()
    return to_out(agent)


async def delete_agent(session: AsyncSession, agent_id: str) -> None:
    """Soft delete. An agent still seated in a conversation cannot be deleted: its history and
    decision rows reference it, and silently emptying a group would change who speaks."""
    agent = await get_agent(session, agent_id)
    seated = await session.scalar(
        select(ConversationMember.conversation_id).where(ConversationMember.agent_id == agent_id).limit(1)
    )
    if seated is not None:
        raise Conflict(
            "agent is a member of at least one conversation; remove it from its conversations first",
            code="agent_in_use",
            details={"conversationId": seated},
        )
    agent.deleted_at = utcnow()
    await session.commit()
