"""Loads what the scheduling library needs, in three queries: members, the user's direct-chat
stats with each member, and the recent group messages."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Agent, Conversation, ConversationMember, Message
from scheduling import AgentCapabilities, AgentProfile, DirectChatStats, GroupMessage


class LoadedAgents:
    def __init__(self, profiles: list[AgentProfile], rows: dict[str, Agent], muted: frozenset[str] = frozenset(),
                 joined: dict[str, int] | None = None) -> None:  # fmt: skip
        self.profiles = profiles
        self.rows = rows
        self.muted = muted  # members chosen only when named or asked to speak
        self.joined = joined or {}  # agent id -> the seq it joined after (presence)

    def name(self, agent_id: str | None) -> str:
        row = self.rows.get(agent_id or "")
        return row.name if row else (agent_id or "agent")


def to_profile(agent: Agent, display_order: int) -> AgentProfile:
    caps = AgentCapabilities(**agent.capabilities) if agent.capabilities else None
    return AgentProfile(
        id=agent.id, name=agent.name, aliases=tuple(agent.aliases or ()), headline=agent.headline,
        description=agent.description, personality_prompt=agent.personality_prompt, tone_prompt=agent.tone_prompt,
        default_prompt=agent.default_prompt, capabilities=caps, display_order=display_order,
    )  # fmt: skip


async def load_agents(session: AsyncSession, conversation_id: str) -> LoadedAgents:
    rows = await session.execute(
        select(Agent, ConversationMember.display_order, ConversationMember.muted, ConversationMember.joined_seq)
        .join(ConversationMember, ConversationMember.agent_id == Agent.id)
        .where(ConversationMember.conversation_id == conversation_id)
        .order_by(ConversationMember.display_order, ConversationMember.id)
    )
    profiles, by_id, muted, joined = [], {}, set(), {}
    for agent, order, is_muted, joined_seq in rows:
        profiles.append(to_profile(agent, order))
        by_id[agent.id] = agent
        joined[agent.id] = int(joined_seq or 0)
        if is_muted:
            muted.add(agent.id)
    return LoadedAgents(profiles, by_id, frozenset(muted), joined)


async def direct_stats(session: AsyncSession, owner_id: str, agent_ids: list[str]) -> dict[str, DirectChatStats]:
    rows = await session.execute(
        select(Conversation.direct_agent_id, Conversation.message_count, Conversation.last_message_at_ms).where(
            Conversation.owner_id == owner_id,
            Conversation.kind == "direct",
            Conversation.direct_agent_id.in_(agent_ids),
        )
    )
    return {a: DirectChatStats(message_count=c, last_message_at_ms=t) for a, c, t in rows}


async def recent_messages(session: AsyncSession, conversation_id: str, limit: int, *, before_seq: int | None = None) -> list[GroupMessage]:
    """The conversation's last ``limit`` visible messages, each with who was present (the
    whole window: a member's slice is ``Presence.window`` of it)."""
    query = select(Message.role, Message.seq, Message.agent_id, Message.content, Message.present_agent_ids).where(
        Message.conversation_id == conversation_id, Message.deleted_at.is_(None)
    )
    if before_seq is not None:
        query = query.where(Message.seq < before_seq)
    rows = await session.execute(query.order_by(Message.seq.desc()).limit(limit))
    return [GroupMessage(role=r, seq=s, agent_id=a, content=c, present=tuple(p) if p is not None else None)
            for r, s, a, c, p in reversed(rows.all())]  # fmt: skip


async def last_user_message(session: AsyncSession, conversation_id: str) -> Message | None:
    return await session.scalar(
        select(Message).where(Message.conversation_id == conversation_id, Message.role == "user",
                              Message.deleted_at.is_(None)).order_by(Message.seq.desc()).limit(1)
    )  # fmt: skip
