"""Lore entries: CRUD with limits (issue 28), and the entries a turn may use.

A conversation's entries are its owner's (another user's are a 404, like the conversation); an
agent's entries are part of the agent, so, like the agent, anyone reads them and admins write them.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec
from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.agents.service import get_agent
from app.auth.tokens import Principal
from app.conversations.service import get_owned
from app.db.models import Conversation, ConversationMember, LoreEntry, utcnow
from app.errors import NotFound, ValidationFailed
from app.lore.schemas import LoreCreate, LoreOut, LoreUpdate
from app.settings import Limits
from scheduling import lore

_FIELDS = ("keys", "secondary_keys", "content", "priority", "enabled", "member_ids")


def to_out(row: LoreEntry) -> LoreOut:
    return LoreOut(
        id=row.id, conversation_id=row.conversation_id, agent_id=row.agent_id, keys=list(row.keys),
        secondary_keys=list(row.secondary_keys), content=row.content, priority=row.priority, enabled=row.enabled,
        member_ids=None if row.member_ids is None else list(row.member_ids), created_at=row.created_at,
        updated_at=row.updated_at,
    )  # fmt: skip


def _clean_keys(field: str, keys: list[str], limits: Limits, *, required: bool) -> list[str]:
    cleaned = list(dict.fromkeys(k.strip() for k in keys if k.strip()))
    if required and not cleaned:
        raise ValidationFailed(f"{field} needs at least one non-blank key", code="lore_invalid", details={"field": field})
    if len(cleaned) > limits.max_lore_keys:
        raise ValidationFailed(f"{field} has {len(cleaned)} keys; the limit is {limits.max_lore_keys}",
                               code="lore_limit_reached", details={"field": field, "limit": limits.max_lore_keys})  # fmt: skip
    for key in cleaned:
        if len(key) > limits.max_lore_key_chars:
            raise ValidationFailed(f"the key {key[:20]!r}… of {field} is over {limits.max_lore_key_chars} characters",
                                   code="field_too_long", details={"field": field, "limit": limits.max_lore_key_chars})  # fmt: skip
    return cleaned


def _clean_content(content: str, limits: Limits) -> str:
    content = content.strip()
    if not content:
        raise ValidationFailed("content is empty", code="lore_invalid", details={"field": "content"})
    if len(content) > limits.max_lore_content_chars:
        raise ValidationFailed(f"content has {len(content)} characters; the limit is {limits.max_lore_content_chars}",
                               code="field_too_long", details={"field": "content", "limit": limits.max_lore_content_chars})  # fmt: skip
    return content


async def _check_members(session: AsyncSession, entry: LoreEntry, member_ids: list[str] | None) -> list[str] | None:
    """``memberIds`` names members of the entry's conversation; an agent's entry has none."""
    if member_ids is None:
        return None
    if entry.conversation_id is None:
        raise ValidationFailed("memberIds is for a conversation's entry; an agent's entry is only for that agent",
                               code="lore_invalid", details={"field": "memberIds"})  # fmt: skip
    members = set(await session.scalars(
        select(ConversationMember.agent_id).where(ConversationMember.conversation_id == entry.conversation_id)
    ))  # fmt: skip
    outside = [m for m in member_ids if m not in members]
    if outside:
        raise ValidationFailed(f"memberIds names agents that are not members: {', '.join(outside)}",
                               code="lore_invalid", details={"field": "memberIds", "agentIds": outside})  # fmt: skip
    return list(dict.fromkeys(member_ids))


async def _apply(session: AsyncSession, entry: LoreEntry, data: LoreCreate | LoreUpdate, limits: Limits) -> None:
    for field in _FIELDS:
        value = getattr(data, field)
        if value is msgspec.UNSET:
            continue
        if field in ("keys", "secondary_keys"):
            value = _clean_keys(_camel(field), value, limits, required=field == "keys")
        elif field == "content":
            value = _clean_content(value, limits)
        elif field == "member_ids":
            value = await _check_members(session, entry, value)
        setattr(entry, field, value)


def _camel(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(part.title() for part in rest)


async def _create(session: AsyncSession, owner_id: str, data: LoreCreate, limits: Limits, *,
                  conversation_id: str | None = None, agent_id: str | None = None) -> LoreOut:  # fmt: skip
    column = LoreEntry.conversation_id if conversation_id is not None else LoreEntry.agent_id
    count = int(await session.scalar(select(func.count()).where(column == (conversation_id or agent_id))) or 0)
    if count >= limits.max_lore_entries:
        holder = "conversation" if conversation_id is not None else "agent"
        raise ValidationFailed(f"the {holder} already has {count} lore entries; the limit is {limits.max_lore_entries}",
                               code="lore_limit_reached", details={"limit": limits.max_lore_entries})  # fmt: skip
    now = utcnow()
    entry = LoreEntry(owner_id=owner_id, conversation_id=conversation_id, agent_id=agent_id, created_at=now,
                      updated_at=now, secondary_keys=[], member_ids=None, priority=0, enabled=True)  # fmt: skip
    await _apply(session, entry, data, limits)
    session.add(entry)
    await session.commit()
    return to_out(entry)


def _listing(*where: object) -> object:
    return select(LoreEntry).where(*where).order_by(LoreEntry.priority.desc(), LoreEntry.id)


async def list_for_conversation(session: AsyncSession, owner_id: str, conversation_id: str) -> list[LoreOut]:
    await get_owned(session, owner_id, conversation_id)
    return [to_out(r) for r in await session.scalars(_listing(LoreEntry.conversation_id == conversation_id))]


async def create_for_conversation(session: AsyncSession, owner_id: str, conversation_id: str, data: LoreCreate,
                                  limits: Limits) -> LoreOut:  # fmt: skip
    await get_owned(session, owner_id, conversation_id)
    return await _create(session, owner_id, data, limits, conversation_id=conversation_id)


async def list_for_agent(session: AsyncSession, agent_id: str) -> list[LoreOut]:
    await get_agent(session, agent_id)
    return [to_out(r) for r in await session.scalars(_listing(LoreEntry.agent_id == agent_id))]


async def create_for_agent(session: AsyncSession, owner_id: str, agent_id: str, data: LoreCreate,
                           limits: Limits) -> LoreOut:  # fmt: skip
    await get_agent(session, agent_id)
    return await _create(session, owner_id, data, limits, agent_id=agent_id)


async def _writable(session: AsyncSession, principal: Principal, entry_id: str) -> LoreEntry:
    """A conversation's entry for its owner, an agent's for an admin; any other is a 404 for a
    conversation's entry (it is not yours) and a 403 for an agent's (it is readable by all)."""
    entry = await session.get(LoreEntry, entry_id)
    if entry is not None and entry.conversation_id is not None:
        owner = await session.scalar(select(Conversation.owner_id).where(Conversation.id == entry.conversation_id))
        if owner == principal.user_id:
            return entry
    elif entry is not None:
        principal.require_admin()
        return entry
    raise NotFound(f"lore entry {entry_id} not found", code="lore_entry_not_found")


async def update_entry(session: AsyncSession, principal: Principal, entry_id: str, data: LoreUpdate,
                       limits: Limits) -> LoreOut:  # fmt: skip
    entry = await _writable(session, principal, entry_id)
    await _apply(session, entry, data, limits)
    entry.updated_at = utcnow()
    await session.commit()
    return to_out(entry)


async def delete_entry(session: AsyncSession, principal: Principal, entry_id: str) -> None:
    entry = await _writable(session, principal, entry_id)
    await session.delete(entry)
    await session.commit()


# -- what a turn uses -------------------------------------------------------------------------


async def entries_for_turn(session: AsyncSession, conversation_id: str, agent_ids: Iterable[str]) -> list[lore.LoreEntry]:
    """The enabled entries of the conversation and of its members, as the pure library takes them."""
    rows = await session.scalars(
        select(LoreEntry).where(LoreEntry.enabled.is_(True),
                                or_(LoreEntry.conversation_id == conversation_id, LoreEntry.agent_id.in_(list(agent_ids))))
    )  # fmt: skip
    return [
        lore.LoreEntry(id=r.id, keys=tuple(r.keys), secondary_keys=tuple(r.secondary_keys), content=r.content,
                       priority=r.priority, enabled=r.enabled, agent_id=r.agent_id,
                       member_ids=None if r.member_ids is None else tuple(r.member_ids))
        for r in rows
    ]  # fmt: skip
