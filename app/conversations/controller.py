"""/v1/conversations: owner only; another user's conversation is a 404."""

from __future__ import annotations

from litestar import Controller, Response, delete, get, patch, post
from litestar.datastructures import State
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.tokens import Principal
from app.conversations import service
from app.conversations.delete import delete_conversation
from app.conversations.schemas import ConversationCreate, ConversationOut, ConversationUpdate, MemberAdd, MemberUpdate, RewindIn
from app.turns.rewind import RewindOut, rewind


class ConversationController(Controller):
    path = "/v1/conversations"
    tags = ["conversations"]

    @post("/")
    async def create(
        self, data: ConversationCreate, session: AsyncSession, principal: Principal, state: State
    ) -> Response[ConversationOut]:
        out = await service.create_conversation(session, principal.user_id, data, state.settings.limits)
        await state.turn_pipeline.conversation_saved(principal.user_id, out.id)  # e.g. the Story is set up
        return Response(out, status_code=201 if out.created else 200)

    @get("/")
    async def list_all(self, session: AsyncSession, principal: Principal) -> list[ConversationOut]:
        return await service.list_conversations(session, principal.user_id)

    @post("/{conversation_id:str}/rewind", status_code=200)
    async def rewind(self, conversation_id: str, data: RewindIn, principal: Principal, state: State) -> RewindOut:
        """Remove everything after ``toMessageId`` (kept as a hidden branch), clear open suggestions,
        and put every agent's Story back to its state at that message (or start it over, said per
        agent in ``story``). Holds the turn lock: 409 ``turn_in_progress`` while a turn runs.
        ``conversation.rewound`` on the conversation's stream."""
        return await rewind(state.turn_pipeline, state.event_hub, principal.user_id, conversation_id,
                            data.to_message_id)  # fmt: skip

    @get("/{conversation_id:str}")
    async def read(self, conversation_id: str, session: AsyncSession, principal: Principal) -> ConversationOut:
        return await service.to_out(session, await service.get_owned(session, principal.user_id, conversation_id),
                                    running=True)  # fmt: skip

    @delete("/{conversation_id:str}", status_code=204)
    async def remove(self, conversation_id: str, principal: Principal, state: State) -> None:
        """Delete the conversation and everything in it (messages, turns, decision rows, Story,
        suggestions, events). 409 ``turn_in_progress`` while a turn runs, ``auto_mode_running``
        while auto mode runs; another user's conversation is a 404."""
        await delete_conversation(state.turn_pipeline, state.event_hub, principal.user_id, conversation_id)

    @patch("/{conversation_id:str}")
    async def update(
        self, conversation_id: str, data: ConversationUpdate, session: AsyncSession, principal: Principal, state: State
    ) -> ConversationOut:
        out = await service.update_conversation(session, principal.user_id, conversation_id, data, state.settings.limits)
        await state.turn_pipeline.conversation_saved(principal.user_id, conversation_id)
        return out

    @post("/{conversation_id:str}/members", status_code=200)
    async def add_member(
        self, conversation_id: str, data: MemberAdd, session: AsyncSession, principal: Principal, state: State
    ) -> ConversationOut:
        out = await service.add_member(session, principal.user_id, conversation_id, data.agent_id, state.settings.limits)
        await state.turn_pipeline.conversation_saved(principal.user_id, conversation_id)
        return out

    @patch("/{conversation_id:str}/members/{agent_id:str}")
    async def update_member(
        self, conversation_id: str, agent_id: str, data: MemberUpdate, session: AsyncSession, principal: Principal,
        state: State,
    ) -> ConversationOut:  # fmt: skip
        """``{muted}``: a muted member is never selected by the model, the scorer or a reply order,
        only when named or asked to speak (``POST …/members/{agentId}/speak``); it still sees the chat."""
        out = await service.update_member(session, principal.user_id, conversation_id, agent_id, muted=data.muted)
        await state.turn_pipeline.conversation_saved(principal.user_id, conversation_id)
        return out

    @delete("/{conversation_id:str}/members/{agent_id:str}", status_code=200)
    async def remove_member(
        self, conversation_id: str, agent_id: str, session: AsyncSession, principal: Principal, state: State
    ) -> ConversationOut:
        return await service.remove_member(session, principal.user_id, conversation_id, agent_id, state.settings.limits)
