"""/v1/conversations/{id}/turns: JSON, or Server-Sent Events with ``Accept: text/event-stream``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.datastructures import State
from litestar.response import ServerSentEvent
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.tokens import Principal
from app.messages.service import check_content
from app.messages.service import to_json as message_json
from app.messages.service import to_out as message_out
from app.turns import repository
from app.turns.schemas import TurnCreate
from app.turns.hooks import hooks_with
from app.turns.stages import model_configured


def _replay(turn: Any, user_message: Any) -> dict[str, Any]:
    if turn.result is not None:
        return turn.result
    return {"turnId": turn.id, "status": turn.status, "conversationId": turn.conversation_id,
            "userMessage": message_json(user_message) if user_message else None,
            "agentMessages": [], "orchestration": {}, "error": turn.error}  # fmt: skip


class TurnController(Controller):
    path = "/v1/conversations/{conversation_id:str}/turns"
    tags = ["turns"]

    @post("/")
    async def create(
        self, conversation_id: str, data: TurnCreate, request: Request, principal: Principal, state: State
    ) -> Response[Any]:
        check_content(data.content, state.settings.limits)
        if not model_configured(state.model, "actor"):
            from app.errors import ModelNotConfigured

            raise ModelNotConfigured("actor")
        started = await repository.start_turn(
            state.sessions, principal.user_id, conversation_id, data.content, data.idempotency_key,
            stale_after_s=state.settings.turn_timeout_s * 2,
        )  # fmt: skip
        if started.replay:
            if started.turn.status == "running":
                raise repository.TurnInProgress(started.turn.id)
            return Response(_replay(started.turn, started.user_message), status_code=200)
        pipeline = state.turn_pipeline
        for hook in hooks_with(pipeline.hooks, "turn_starting"):  # e.g. stale suggestions are cleared
            await hook.turn_starting(conversation_id)
        if "text/event-stream" in request.headers.get("accept", ""):
            return ServerSentEvent(_stream(pipeline, started))
        # The turn finishes even if the client goes away: the user message is already accepted.
        result = await asyncio.shield(asyncio.ensure_future(pipeline.run(started)))
        return Response(result, status_code=201)

    @get("/{turn_id:str}")
    async def read(self, conversation_id: str, turn_id: str, session: AsyncSession, principal: Principal) -> dict[str, Any]:
        turn = await repository.load_turn(session, principal.user_id, conversation_id, turn_id)
        from sqlalchemy import select

        from app.db.models import Message

        message = await session.get(Message, turn.user_message_id) if turn.user_message_id else None
        out = _replay(turn, message)
        if turn.result is None:  # still running: the replies saved so far
            saved = await session.scalars(
                select(Message).where(Message.turn_id == turn.id, Message.role == "agent", Message.deleted_at.is_(None))
                .order_by(Message.seq)
            )  # fmt: skip
            out["agentMessages"] = [message_json(m) for m in saved]
        return out


async def _stream(pipeline: Any, started: Any) -> AsyncIterator[dict[str, str]]:
    queue: asyncio.Queue[tuple[str, dict[str, Any]] | None] = asyncio.Queue()

    async def emit(event: str, data: dict[str, Any]) -> None:
        await queue.put((event, data))

    async def run() -> None:
        try:
            await pipeline.run(started, emit)
        finally:
            await queue.put(None)

    task = asyncio.ensure_future(run())  # keeps running if the client disconnects
    while (item := await queue.get()) is not None:
        event, data = item
        yield {"event": event, "data": json.dumps(data, ensure_ascii=False, default=str)}
    await task


class RegenerateController(Controller):
    path = "/v1/conversations/{conversation_id:str}/messages"
    tags = ["messages"]

    @post("/{message_id:str}/regenerate", status_code=200)
    async def regenerate(self, conversation_id: str, message_id: str, principal: Principal, state: State) -> Any:
        """A new reply for an agent message (plain actor path: no Story prepare or write)."""
        from app.errors import ModelNotConfigured
        from app.turns.regenerate import regenerate

        if not model_configured(state.model, "actor"):
            raise ModelNotConfigured("actor")
        return message_out(await regenerate(state.turn_pipeline, principal.user_id, conversation_id, message_id))
