"""Story HTTP under ``/v1/conversations/{id}/story/{agentId}``.

``GET``: the status report (owner or admin).
``POST …/reset`` (owner or admin): the scope starts over from a fresh initialisation on the next
turn; the old state is kept as a quarantine record of status ``reset``. The same reset also answers
at ``POST /v1/conversations/{id}/agents/{agentId}/story/reset`` (the path issue 31 names).
Admin only, the scope's quarantined events:
``GET …/quarantine?status=``: the records (``status``: quarantined (default) | released | discarded | reset | all).
``POST …/quarantine/{recordId}/release``: re-queue the event for settlement (one CAS write).
``POST …/quarantine/{recordId}/discard``: drop it (kept as ``discarded`` until retention).
"""

from __future__ import annotations

from typing import Literal

from litestar import Controller, get, post
from litestar.params import Parameter
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.tokens import Principal
from app.story import service
from app.story.service import QuarantineOut, StoryResetOut, StoryStatusOut


class StoryController(Controller):
    path = "/v1/conversations/{conversation_id:str}/story"
    tags = ["story"]

    @get("/{agent_id:str}")
    async def status(self, conversation_id: str, agent_id: str, session: AsyncSession,
                     principal: Principal) -> StoryStatusOut:  # fmt: skip
        return await service.story_status(session, principal, conversation_id, agent_id)

    @post("/{agent_id:str}/reset", status_code=200)
    async def reset(self, conversation_id: str, agent_id: str, session: AsyncSession,
                    principal: Principal) -> StoryResetOut:  # fmt: skip
        return await service.reset_story(session, principal, conversation_id, agent_id)

    @get("/{agent_id:str}/quarantine")
    async def quarantine(self, conversation_id: str, agent_id: str, session: AsyncSession, principal: Principal,
                         status: Literal["quarantined", "released", "discarded", "reset", "all"] = Parameter(query="status", default="quarantined")) -> list[QuarantineOut]:  # fmt: skip
        return await service.list_quarantine(session, principal, conversation_id=conversation_id, agent_id=agent_id,
                                             status=status)  # fmt: skip

    @post("/{agent_id:str}/quarantine/{record_id:str}/release", status_code=200)
    async def release(self, conversation_id: str, agent_id: str, record_id: str, session: AsyncSession,
                      principal: Principal) -> QuarantineOut:  # fmt: skip
        return await service.release_quarantined(session, principal, record_id, (conversation_id, agent_id))

    @post("/{agent_id:str}/quarantine/{record_id:str}/discard", status_code=200)
    async def discard(self, conversation_id: str, agent_id: str, record_id: str, session: AsyncSession,
                      principal: Principal) -> QuarantineOut:  # fmt: skip
        return await service.discard_quarantined(session, principal, record_id, (conversation_id, agent_id))


@post("/v1/conversations/{conversation_id:str}/agents/{agent_id:str}/story/reset", status_code=200, tags=["story"])
async def reset_by_member_path(conversation_id: str, agent_id: str, session: AsyncSession,
                               principal: Principal) -> StoryResetOut:  # fmt: skip
    """The member-scoped spelling of ``POST …/story/{agentId}/reset``."""
    return await service.reset_story(session, principal, conversation_id, agent_id)
