"""Conversations: group (2..N agents) or direct (exactly one, at most one per user and agent)."""

from __future__ import annotations

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.agents.service import get_agent
from app.auth.tokens import Principal
from app.conversations.schemas import ConversationCreate, ConversationOut, ConversationUpdate, MemberOut
from app.conversations.settings import dump_settings, parse_settings
from app.db.models import Agent, Conversation, ConversationMember, Turn, utcnow
from app.errors import Conflict, NotFound, ValidationFailed
from app.settings import Limits


async def get_owned(session: AsyncSession, owner_id: str, conversation_id: str) -> Conversation:
    """Another user's conversation is reported exactly like a missing one (404)."""
    conv = await session.get(Conversation, conversation_id)
    if conv is None or conv.owner_id != owner_id:
        raise NotFound(f"conversation {conversation_id} not found", code="conversation_not_found")
    return conv


async def get_readable(session: AsyncSession, principal: Principal, conversation_id: str) -> Conversation:
    """The owner's conversation, or any for an admin; otherwise a 404 like a missing one."""
    if not principal.is_admin:
        return await get_owned(session, principal.user_id, conversation_id)
    conv = await session.get(Conversation, conversation_id)
    if conv is None:
        raise NotFound(f"conversation {conversation_id} not found", code="conversation_not_found")
    return conv


async def members_of(session: AsyncSession, conversation_id: str) -> list[MemberOut]:
    rows = await session.execute(
        select(ConversationMember.agent_id, Agent.name, ConversationMember.display_order, ConversationMember.muted,
               ConversationMember.joined_seq)
        .join(Agent, Agent.id == ConversationMember.agent_id)
        .where(ConversationMember.conversation_id == conversation_id)
        .order_by(ConversationMember.display_order, ConversationMember.id)
    )
    return [MemberOut(agent_id=a, name=n, display_order=o, muted=bool(m), joined_seq=int(j or 0)) for a, n, o, m, j in rows]


async def to_out(session: AsyncSession, conv: Conversation, *, created: bool = False,
                 running: bool = False) -> ConversationOut:  # fmt: skip
    """``running``: also look up the turn running now (one more query; the single read asks for it)."""
    running_turn_id = None
    if running:
        running_turn_id = await session.scalar(
            select(Turn.id).where(Turn.running_lock == conv.id, Turn.status == "running").limit(1))  # fmt: skip
    return ConversationOut(
        id=conv.id, kind=conv.kind, title=conv.title, members=await members_of(session, conv.id),
        settings=conv.settings, message_count=conv.message_count, last_message_at_ms=conv.last_message_at_ms,
        version=conv.version, created_at=conv.created_at, updated_at=conv.updated_at, created=created,
        running_turn_id=running_turn_id,
    )  # fmt: skip


def _clean_title(title: str, limits: Limits) -> str:
    title = title.strip()
    if len(title) > limits.max_title_chars:
        raise ValidationFailed(f"title has {len(title)} characters; the limit is {limits.max_title_chars}",
                               code="field_too_long", details={"field": "title", "limit": limits.max_title_chars})
    return title


def _check_member_count(kind: str, agent_ids: list[str], limits: Limits) -> None:
    if len(set(agent_ids)) != len(agent_ids):
        raise ValidationFailed("agentIds must be distinct", code="duplicate_agents")
    if kind == "direct" and len(agent_ids) != 1:
        raise ValidationFailed("a direct conversation has exactly one agent", code="invalid_member_count")
    if kind == "group" and not limits.min_group_members <= len(agent_ids) <= limits.max_group_members:
        raise ValidationFailed(
            f"a group needs {limits.min_group_members}-{limits.max_group_members} agents, got {len(agent_ids)}",
            code="invalid_member_count",
        )


async def _existing_direct(session: AsyncSession, owner_id: str, agent_id: str) -> Conversation | None:
    return await session.scalar(
        select(Conversation).where(Conversation.owner_id == owner_id, Conversation.direct_agent_id == agent_id)
    )


async def create_conversation(
    session: AsyncSession, owner_id: str, data: ConversationCreate, limits: Limits
) -> ConversationOut:
    _check_member_count(data.kind, data.agent_ids, limits)
    for agent_id in data.agent_ids:
        await get_agent(session, agent_id)
    settings = dump_settings(parse_settings(data.settings))
    if data.kind == "direct" and (found := await _existing_direct(session, owner_id, data.agent_ids[0])):
        return await to_out(session, found)
    conv = Conversation(
        owner_id=owner_id, kind=data.kind, title=_clean_title(data.title, limits), settings=settings,
        direct_agent_id=data.agent_ids[0] if data.kind == "direct" else None,
    )  # fmt: skip
    session.add(conv)
    await session.flush()
    session.add_all(
        ConversationMember(conversation_id=conv.id, agent_id=a, display_order=i) for i, a in enumerate(data.agent_ids)
    )
    try:
        await session.commit()
    except IntegrityError:
        # Two concurrent creates of the same direct conversation: the unique constraint picked one.
        await session.rollback()
        if data.kind == "direct" and (found := await _existing_direct(session, owner_id, data.agent_ids[0])):
            return await to_out(session, found)
        raise
    return await to_out(session, conv, created=True)


async def list_conversations(session: AsyncSession, owner_id: str) -> list[ConversationOut]:
    convs = await session.scalars(
        select(Conversation).where(Conversation.owner_id == owner_id).order_by(Conversation.updated_at.desc())
    )
    return [await to_out(session, c) for c in convs]


async def update_conversation(
    session: AsyncSession, owner_id: str, conversation_id: str, data: ConversationUpdate, limits: Limits
) -> ConversationOut:
    conv = await get_owned(session, owner_id, conversation_id)
    if isinstance(data.title, str):
        conv.title = _clean_title(data.title, limits)
    if isinstance(data.settings, dict):
        conv.settings = dump_settings(parse_settings(data.settings, base=conv.settings))
    _touch(conv)
    await session.commit()
    return await to_out(session, conv)


async def _owned_group(session: AsyncSession, owner_id: str, conversation_id: str) -> Conversation:
    conv = await get_owned(session, owner_id, conversation_id)
    if conv.kind != "group":
        raise ValidationFailed("members can only be changed in a group conversation", code="not_a_group")
    return conv


def _touch(conv: Conversation) -> None:
    """Every change of a conversation's own fields bumps its version (clients compare it)."""
    conv.version += 1
    conv.updated_at = utcnow()


async def add_member(
    session: AsyncSession, owner_id: str, conversation_id: str, agent_id: str, limits: Limits
) -> ConversationOut:
    conv = await _owned_group(session, owner_id, conversation_id)
    await get_agent(session, agent_id)
    count = await session.scalar(
        select(func.count()).select_from(ConversationMember).where(ConversationMember.conversation_id == conv.id)
    )
    top = await session.scalar(
        select(func.max(ConversationMember.display_order)).where(ConversationMember.conversation_id == conv.id)
    )
    if count >= limits.max_group_members:
        raise ValidationFailed(f"a group has at most {limits.max_group_members} agents", code="invalid_member_count")
    # Presence: it joins after the messages saved so far (``settings.history: sinceJoin`` hides them from it).
    session.add(ConversationMember(conversation_id=conv.id, agent_id=agent_id, display_order=(top or 0) + 1,
                                   joined_seq=conv.last_seq or 0))  # fmt: skip
    _touch(conv)
    try:
        await session.commit()
    except IntegrityError:
        await session.rollback()
        raise Conflict("agent is already a member", code="already_member") from None
    return await to_out(session, conv)


async def update_member(session: AsyncSession, owner_id: str, conversation_id: str, agent_id: str, *,
                        muted: bool) -> ConversationOut:  # fmt: skip
    """Mute or unmute a member of a group (a direct chat's one agent is always the listener)."""
    conv = await _owned_group(session, owner_id, conversation_id)
    member = await session.scalar(select(ConversationMember).where(
        ConversationMember.conversation_id == conv.id, ConversationMember.agent_id == agent_id))  # fmt: skip
    if member is None:
        raise NotFound(f"agent {agent_id} is not a member", code="member_not_found")
    if member.muted != muted:
        member.muted = muted
        _touch(conv)
    await session.commit()
    return await to_out(session, conv)


async def remove_member(
    session: AsyncSession, owner_id: str, conversation_id: str, agent_id: str, limits: Limits
) -> ConversationOut:
    conv = await _owned_group(session, owner_id, conversation_id)
    ids = list(await session.scalars(select(ConversationMember.agent_id).where(ConversationMember.conversation_id == conv.id)))
    if agent_id not in ids:
        raise NotFound(f"agent {agent_id} is not a member", code="member_not_found")
    if len(ids) - 1 < limits.min_group_members:
        raise ValidationFailed(f"a group needs at least {limits.min_group_members} agents", code="invalid_member_count")
    await session.execute(
        delete(ConversationMember).where(
            ConversationMember.conversation_id == conv.id, ConversationMember.agent_id == agent_id
        )
    )
    _touch(conv)
    await session.commit()
    return await to_out(session, conv)
