"""Suggestions over HTTP: generate for an agent message, read the newest record; write for me
(``POST …/impersonate``: one line in the user's voice, JSON or SSE, never stored).

Thin handlers: ownership and the anchor are checked from the database (``context.prepare``), the
service runs the generation; the only table written is ``suggestions``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any, Literal

from litestar import Controller, MediaType, Request, Response, get, post
from litestar.datastructures import State
from litestar.response import ServerSentEvent
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.tokens import Principal
from app.conversations.service import get_owned
from app.errors import AppError, ModelNotConfigured, NotFound
from app.suggestions import impersonate, repository
from app.suggestions.context import prepare
from app.suggestions.errors import AutoReplyDisabled
from app.suggestions.hooks import SuggestionHooks
from app.suggestions.schemas import ImpersonateIn, ImpersonateOut, SuggestionCreated, SuggestionOut, to_created, to_out
from app.suggestions.service import SuggestionService
from app.turns.controller import wants_stream
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

    @post("/impersonate", status_code=200)
    async def write_for_me(
        self, conversation_id: str, data: ImpersonateIn, request: Request, session: AsyncSession, principal: Principal,
        state: State,
    ) -> Response[ImpersonateOut] | ServerSentEvent:  # fmt: skip
        """One draft of the user's next line, in the user's voice and the conversation's language,
        continuing ``draft`` when given. Never stored, never sent. ``Accept: text/event-stream``
        streams it (``impersonate.started/delta/discarded/done/failed``)."""
        conv = await get_owned(session, principal.user_id, conversation_id)
        config, inp = await impersonate.prepare(session, conv, data.draft)
        await session.commit()  # end the read; the model call holds no transaction
        if not config.enabled:
            raise AutoReplyDisabled()
        if not model_configured(state.model, "auto_reply"):
            raise ModelNotConfigured("auto_reply")
        if wants_stream(request):
            return ServerSentEvent(_impersonate_events(state.model, config, inp))
        body = await impersonate.write_for_me(state.model, config, inp)
        return Response(ImpersonateOut(text=body["text"], draft=inp.draft, attempts=body["attempts"],
                                       model=body.get("model"), usage=body.get("usage") or {}))  # fmt: skip


async def _impersonate_events(model: Any, config: Any, inp: Any) -> AsyncIterator[dict[str, Any]]:
    """The generation's events as SSE; a client that goes away stops the model call (nothing is
    stored, so there is nothing to finish for)."""
    queue: asyncio.Queue[tuple[str, dict[str, Any]] | None] = asyncio.Queue()

    async def emit(event: str, data: dict[str, Any]) -> None:
        queue.put_nowait((event, data))

    async def run() -> None:
        try:
            await impersonate.write_for_me(model, config, inp, emit)
        except AppError as exc:
            await emit("impersonate.failed", {"code": exc.code, "message": exc.message, **exc.details})
        except Exception as exc:  # noqa: BLE001 - the stream ends with a reason, never silently
            await emit("impersonate.failed", {"code": "internal_error", "message": f"{type(exc).__name__}: {exc}"[:300]})
        finally:
            queue.put_nowait(None)

    task = asyncio.ensure_future(run())
    try:
        while (item := await queue.get()) is not None:
            yield {"event": item[0], "data": json.dumps(item[1], ensure_ascii=False, default=str)}
    finally:
        task.cancel()
