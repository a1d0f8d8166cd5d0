"""/v1/agents: read for any user, write for admins."""

from __future__ import annotations

from litestar import Controller, delete, get, patch, post
from litestar.datastructures import State
from sqlalchemy.ext.asyncio import AsyncSession

from app.agents import service
from app.agents.schemas import AgentCreate, AgentOut, AgentUpdate
from app.auth.tokens import Principal


class AgentController(Controller):
    path = "/v1/agents"
    tags = ["agents"]

    @post("/")
    async def create(self, data: AgentCreate, session: AsyncSession, principal: Principal, state: State) -> AgentOut:
        principal.require_admin()
        return await service.create_agent(session, data, state.settings.limits)

    @get("/")
    async def list_all(self, session: AsyncSession, principal: Principal) -> list[AgentOut]:
        return await service.list_agents(session)

    @get("/{agent_id:str}")
    async def read(self, agent_id: str, session: AsyncSession, principal: Principal) -> AgentOut:
        return service.to_out(await service.get_agent(session, agent_id))

    @patch("/{agent_id:str}")
    async def update(
        self, agent_id: str, data: AgentUpdate, session: AsyncSession, principal: Principal, state: State
    ) -> AgentOut:
        principal.require_admin()
        return await service.update_agent(session, agent_id, data, state.settings.limits)

    @delete("/{agent_id:str}")
    async def remove(self, agent_id: str, session: AsyncSession, principal: Principal) -> None:
        principal.require_admin()
        await service.delete_agent(session, agent_id)
