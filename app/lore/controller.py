"""Lore (world info) entries, issue 28: a conversation's (owner only; another user's are a 404) and
an agent's (anyone reads, admins write)."""

from __future__ import annotations

from litestar import Controller, delete, get, patch, post
from litestar.datastructures import State
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.tokens import Principal
from app.lore import service
from app.lore.schemas import LoreCreate, LoreOut, LoreUpdate


class LoreController(Controller):
    path = "/v1"
    tags = ["lore"]

    @get("/conversations/{conversation_id:str}/lore")
    async def list_conversation(self, conversation_id: str, session: AsyncSession, principal: Principal) -> list[LoreOut]:
        """The conversation's entries, highest priority first."""
        return await service.list_for_conversation(session, principal.user_id, conversation_id)

    @post("/conversations/{conversation_id:str}/lore")
    async def create_conversation(self, conversation_id: str, data: LoreCreate, session: AsyncSession,
                                  principal: Principal, state: State) -> LoreOut:  # fmt: skip
        """``{keys, content, secondaryKeys?, priority?, enabled?, memberIds?}``: used in a reply's prompt
        when one of ``keys`` (and one of ``secondaryKeys``, if any) is in the recent window, for the
        members in ``memberIds`` (default: all)."""
        return await service.create_for_conversation(session, principal.user_id, conversation_id, data,
                                                     state.settings.limits)  # fmt: skip

    @get("/agents/{agent_id:str}/lore")
    async def list_agent(self, agent_id: str, session: AsyncSession, principal: Principal) -> list[LoreOut]:
        return await service.list_for_agent(session, agent_id)

    @post("/agents/{agent_id:str}/lore")
    async def create_agent(self, agent_id: str, data: LoreCreate, session: AsyncSession, principal: Principal,
                           state: State) -> LoreOut:  # fmt: skip
        """An agent's entry: used only in that agent's replies, in every conversation (admin)."""
        principal.require_admin()
        return await service.create_for_agent(session, principal.user_id, agent_id, data, state.settings.limits)

    @patch("/lore/{entry_id:str}")
    async def update(self, entry_id: str, data: LoreUpdate, session: AsyncSession, principal: Principal,
                     state: State) -> LoreOut:  # fmt: skip
        return await service.update_entry(session, principal, entry_id, data, state.settings.limits)

    @delete("/lore/{entry_id:str}", status_code=204)
    async def remove(self, entry_id: str, session: AsyncSession, principal: Principal) -> None:
        await service.delete_entry(session, principal, entry_id)
