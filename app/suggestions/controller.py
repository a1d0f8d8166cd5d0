"""Suggestions over HTTP: generate for an agent message, read the newest record.

Thin handlers: ownership and the anchor are checked from the database (``context.prepare``), the
service runs the generation; the only table written is ``suggestions``.
"""

from __future__ import annotations

from typing import Literal

from litestar import Controller, MediaType, Response, get, post
from litestar.datastructures import State
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.tokens import Principal
from app.conversations.service import get_owned
from app.errors import ModelNotConfigured, NotFound
from app.suggestions import repository
from app.suggestions.context import prepare
from app.suggestions.errors import AutoReplyDisabled
from app.suggestions.hooks import SuggestionHooks
from app.suggestions.schemas import SuggestionCreated, SuggestionOut, to_created, to_out
from app.suggestions.service import SuggestionService
from app.turns.stages import model_configured
from story.auto_reply import format_numbered


def service_of(state: State) -> SuggestionService:
    """The pipeline's own service, so a turn in this process can cancel a request's generation."""
    for plugin in getattr(state.turn_pipeline, "plugins", []):
        if isinstance(plugin, SuggestionHooks):
            return plugin.service
    return SuggestionService(state.sessions, state.model, state.templates.text("auto_reply"))


class SuggestionController(Controller):
    path = "/v1/conversations/{conversation_id:str}"
    tags = ["suggestions"]

    @post("/messages/{message_id:str}/suggestions")
    async def generate(
        self,
        conversation_id: str,
        message_id: str,
        session: AsyncSession,
        principal: Principal,
        state: State,
        format: Literal["json", "numbered"] = "json",  # noqa: A002 - the query parameter's public name
    ) -> Response[SuggestionCreated | str]:
        conv = await get_owned(session, principal.user_id, conversation_id)
        prepared = await prepare(session, conv, message_id)
        await session.commit()  # end the read; the generation uses its own short transactions
        if not prepared.config.enabled:
            raise AutoReplyDisabled()
        if not model_configured(state.model, "auto_reply"):
            raise ModelNotConfigured("auto_reply")
        row = await service_of(state).generate_now(prepared)
        if format == "numbered":
            return Response(format_numbered(list(row.options)), media_type=MediaType.TEXT, status_code=201)
        return Response(to_created(row), status_code=201)

    @get("/suggestions/latest")
    async def latest(self, conversation_id: str, session: AsyncSession, principal: Principal) -> SuggestionOut:
        await get_owned(session, principal.user_id, conversation_id)
        row = await repository.latest(session, conversation_id)
        if row is None:
            raise NotFound(f"conversation {conversation_id} has no suggestions yet", code="suggestions_not_found")
        return to_out(row)
