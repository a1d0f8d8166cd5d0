"""GET /v1/conversations/{id}/story/{agentId}: the Story status report for the owner or an admin."""

from __future__ import annotations

from litestar import Controller, get
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.tokens import Principal
from app.story import service
from app.story.service import StoryStatusOut


class StoryController(Controller):
    path = "/v1/conversations/{conversation_id:str}/story"
    tags = ["story"]

    @get("/{agent_id:str}")
    async def status(self, conversation_id: str, agent_id: str, session: AsyncSession,
                     principal: Principal) -> StoryStatusOut:  # fmt: skip
        return await service.story_status(session, principal, conversation_id, agent_id)
