"""/v1/conversations/{id}/messages."""

from __future__ import annotations

from typing import Annotated, Literal

from litestar import Controller, delete, get, patch, post, put
from litestar.datastructures import State
from litestar.params import Parameter
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.tokens import Principal
from app.errors import ValidationFailed
from app.messages import service, versions
from app.messages.schemas import (HiddenPage, MessageCreate, MessageEdit, MessageOut, MessagePage, MessageVersions,
                                  VersionSelect)

MAX_SEQ = 2**53  # message seqs are BIGINT; a cursor past this cannot exist (and stays exact in JSON)
MAX_LIMIT = 10_000  # the documented ceiling; COMPANION_MAX_PAGE_SIZE (default 200) is the effective one


class MessageController(Controller):
    path = "/v1/conversations/{conversation_id:str}/messages"
    tags = ["messages"]

    @get("/")
    async def list_page(
        self,
        conversation_id: str,
        session: AsyncSession,
        principal: Principal,
        state: State,
        before: Annotated[
            int | None, Parameter(ge=0, le=MAX_SEQ, description="desc order: only messages with seq < before")
        ] = None,
        after: Annotated[
            int | None, Parameter(ge=0, le=MAX_SEQ, description="asc order: only messages with seq > after")
        ] = None,
        limit: Annotated[int, Parameter(ge=1, le=MAX_LIMIT, description="page size (at most the configured limit)")] = 50,
        order: Literal["desc", "asc"] = "desc",
    ) -> MessagePage:
        if limit > state.settings.limits.max_page_size:
            raise ValidationFailed(f"limit must be at most {state.settings.limits.max_page_size}", code="invalid_limit")
        if (order == "desc" and after is not None) or (order == "asc" and before is not None):
            raise ValidationFailed("use 'before' with order=desc and 'after' with order=asc", code="invalid_cursor")
        cursor = before if order == "desc" else after
        return await service.list_messages(
            session, principal.user_id, conversation_id, cursor=cursor, limit=limit, order=order
        )

    @get("/hidden")
    async def list_hidden(
        self, conversation_id: str, session: AsyncSession, principal: Principal, state: State,
        before: Annotated[int | None, Parameter(ge=0, le=MAX_SEQ, description="only messages with seq < before")] = None,
        limit: Annotated[int, Parameter(ge=1, le=MAX_LIMIT, description="page size (at most the configured limit)")] = 50,
    ) -> HiddenPage:
        """Messages rewinds removed (kept as hidden branches; ``hiddenBy`` is the rewind's id),
        newest first: the owner's, or any conversation's for an admin."""
        if limit > state.settings.limits.max_page_size:
            raise ValidationFailed(f"limit must be at most {state.settings.limits.max_page_size}", code="invalid_limit")
        return await service.list_hidden(session, principal, conversation_id, before=before, limit=limit)

    @post("/")
    async def create(
        self, conversation_id: str, data: MessageCreate, session: AsyncSession, principal: Principal, state: State
    ) -> MessageOut:
        message = await service.post_user_message(
            session, principal.user_id, conversation_id, data.content, state.settings.limits,
            in_transaction=state.turn_pipeline.user_message_stored,
        )
        await state.turn_pipeline.message_added(conversation_id)  # e.g. stale suggestions go
        return message

    @patch("/{message_id:str}")
    async def edit(
        self,
        conversation_id: str,
        message_id: str,
        data: MessageEdit,
        session: AsyncSession,
        principal: Principal,
        state: State,
    ) -> MessageOut:
        return await service.edit_message(
            session, principal.user_id, conversation_id, message_id, data.content, state.settings.limits
        )

    @delete("/{message_id:str}")
    async def remove(self, conversation_id: str, message_id: str, session: AsyncSession, principal: Principal) -> None:
        await service.delete_message(session, principal.user_id, conversation_id, message_id)

    @get("/{message_id:str}/versions")
    async def list_versions(
        self, conversation_id: str, message_id: str, session: AsyncSession, principal: Principal
    ) -> MessageVersions:
        """Every version of the message (regenerate adds one), oldest first, and the selected one."""
        return await versions.list_versions(session, principal.user_id, conversation_id, message_id)

    @put("/{message_id:str}/selected")
    async def select_version(
        self, conversation_id: str, message_id: str, data: VersionSelect, session: AsyncSession,
        principal: Principal, state: State,
    ) -> MessageOut:
        """Switch the message to another version: later prompts, the Story's adoption (an edit, for
        the next turn), suggestions and analytics see it. ``message.version_selected`` on SSE."""
        message, before = await versions.select_version(session, principal.user_id, conversation_id, message_id,
                                                        data.version)  # fmt: skip
        out = service.to_out(message)
        if message.selected_version != before and message.selected_version is not None:
            await state.event_hub.append(conversation_id, None, [("message.version_selected", {
                "conversationId": conversation_id, "messageId": message_id, "agentId": message.agent_id,
                "previous": before, "selected": message.selected_version, "message": service.to_json(message),
            })])  # fmt: skip
        return out
