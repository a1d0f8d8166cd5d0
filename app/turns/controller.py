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
from app.auto import service as auto_service
from app.db import fence
from app.events import TurnEventSink
from app.events.follow import follow
from app.events.outbox import Outbox
from app.events.sink import CLOSED
from app.errors import ModelNotConfigured
from app.messages.service import check_content
from app.messages.service import to_out as message_out
from app.messages.store import InTransaction
from app.turns import reaper, repository
from app.turns.cancel import request_cancel
from app.turns.schemas import TurnCreate
from app.turns.stages import model_configured
from app.turns.view import turn_view
from app.logs import log_context
from app.metrics import running_turn


class TurnController(Controller):
    path = "/v1/conversations/{conversation_id:str}/turns"
    tags = ["turns"]

    @post("/")
    async def create(
        self, conversation_id: str, data: TurnCreate, request: Request, principal: Principal, state: State
    ) -> Response[Any]:
        check_content(data.content, state.settings.limits)
        started = await auto_service.before_user_message(  # a user message ends auto mode at once
            state, principal.user_id, conversation_id,
            lambda stop_auto: start_or_replay(state, principal, conversation_id, data.content, data.idempotency_key,
                                              streamed=wants_stream(request), in_transaction=stop_auto),
        )  # fmt: skip
        if isinstance(started, Response):
            return started
        await state.turn_pipeline.message_added(conversation_id)  # e.g. stale suggestions are cleared
        return await respond(request, state, started)

    @post("/{turn_id:str}/cancel", status_code=202)
    async def cancel(self, conversation_id: str, turn_id: str, principal: Principal, state: State) -> dict[str, Any]:
        """Stop a running turn, whichever replica runs it: within a second it ends ``cancelled``
        (``turn.cancelled`` on the stream), replies already saved stay, drafts in flight are taken
        back (``message.discarded``). 202: asked; the turn's stream or ``GET`` says when it ended.
        409 ``turn_not_running`` once it has ended; asking again while it stops is a 202 too."""
        async with state.sessions() as session:
            await request_cancel(session, principal.user_id, conversation_id, turn_id)
            await session.commit()
        state.turn_pipeline.running.stop(turn_id)  # at once when it runs in this process
        return {"turnId": turn_id, "status": "cancelling"}

    @get("/{turn_id:str}")
    async def read(self, conversation_id: str, turn_id: str, session: AsyncSession, principal: Principal) -> dict[str, Any]:
        turn = await repository.load_turn(session, principal.user_id, conversation_id, turn_id)
        return await turn_view(session, turn)


def wants_stream(request: Request) -> bool:
    return "text/event-stream" in request.headers.get("accept", "")


async def start_or_replay(state: State, principal: Principal, conversation_id: str, content: str | None,
                          idempotency_key: str | None, *, streamed: bool = False,
                          in_transaction: InTransaction | None = None,
                          ) -> repository.StartedTurn | Response[Any]:  # fmt: skip
    """A new running turn (``content`` None: a Continue), or the replayed turn of a known key:
    as JSON (a 409 while it still runs), or, asked with ``Accept: text/event-stream``, as the
    stream it was (its logged events from the start, then live if it still runs).
    ``in_transaction`` also runs in the transaction that stores the user message."""
    if not model_configured(state.model, "actor"):
        raise ModelNotConfigured("actor")
    stored = state.turn_pipeline.user_message_stored

    async def in_message_transaction(session: AsyncSession, conv_id: str) -> None:
        await stored(session, conv_id)
        if in_transaction is not None:
            await in_transaction(session, conv_id)

    started = await repository.start_turn(
        state.sessions, principal.user_id, conversation_id, content, idempotency_key,
        stale_after_s=state.settings.turn_timeout_s * 2, in_transaction=in_message_transaction,
    )  # fmt: skip
    await reaper.announce(state.event_hub, started.abandoned)  # the dead turn this one took over
    if not started.replay:
        return started
    if streamed:
        return ServerSentEvent(follow(state.event_hub, conversation_id, 0, turn_id=started.turn.id), status_code=200)
    if started.turn.status == "running":
        raise repository.TurnInProgress(started.turn.id, repository.lease_remaining_s(started.turn.lease_expires_at))
    async with state.sessions() as session:
        return Response(await turn_view(session, started.turn), status_code=200)


async def respond(request: Request, state: State, started: repository.StartedTurn, **options: Any) -> Response[Any]:
    """Run the turn: SSE with ``Accept: text/event-stream``, else JSON. Either way every event is
    logged for ``GET …/events`` followers, and the turn finishes even if the client goes away
    (the user message is already accepted)."""
    pipeline = state.turn_pipeline
    sink = state.event_hub.sink(started.conversation.id, started.turn.id)
    if wants_stream(request):
        return ServerSentEvent(_stream(pipeline, started, sink, **options))
    result = await asyncio.shield(asyncio.ensure_future(run_logged(pipeline, started, sink, sink.emit_nowait, **options)))
    return Response(result, status_code=201)


async def run_logged(pipeline: Any, started: Any, sink: TurnEventSink, emit: Any, **options: Any) -> dict[str, Any]:
    """The turn, then its plugins' late parts (suggestions) after the lock is released: they
    never delay ``turn.completed``; the JSON response waits for them (bounded by the plugin)."""
    with fence.fenced(started.turn.id):  # every write of the turn needs its lease, its last events too
        try:
            with running_turn(), log_context(turnId=started.turn.id, conversationId=started.turn.conversation_id):
                async with (repository.lease_heartbeat(pipeline.sessions, started.turn.id),  # the lease stays ours
                            pipeline.running.watch(pipeline.sessions, started.turn.id) as stop):  # fmt: skip
                    outcome = await pipeline.run(started, emit, stop=stop, **options)
            if outcome.after is None:
                return outcome.result
            try:
                return {**outcome.result, **await asyncio.shield(outcome.after)}
            finally:  # the turn's last event: a ``?turnId=`` follower stops here
                await emit(CLOSED, {"turnId": started.turn.id, "conversationId": started.turn.conversation_id})
        finally:
            await sink.close()


def _stream(pipeline: Any, started: Any, sink: TurnEventSink, **options: Any) -> AsyncIterator[dict[str, Any]]:
    """Every event goes through the sink; a logged one carries its log id (deltas have none and
    do not wait for the writes before them: ``app.events.outbox``). The turn starts here, while
    the response's headers are still being sent, not when the server first asks for an event."""
    outbox = Outbox()

    async def emit(event: str, data: dict[str, Any]) -> None:  # the turn never waits for the log
        outbox.put(event, data, sink.enqueue(event, data))

    async def run() -> None:
        try:
            await run_logged(pipeline, started, sink, emit, **options)
        finally:
            outbox.end()

    task = asyncio.ensure_future(run())  # keeps running if the client disconnects
    return _events(outbox, task)


async def _events(outbox: Outbox, task: asyncio.Future[None]) -> AsyncIterator[dict[str, Any]]:
    async for event, data, event_id in outbox.drain():
        out: dict[str, Any] = {"event": event, "data": json.dumps(data, ensure_ascii=False, default=str)}
        if event_id is not None:
            out["id"] = event_id
        yield out
    await task


class RegenerateController(Controller):
    path = "/v1/conversations/{conversation_id:str}/messages"
    tags = ["messages"]

    @post("/{message_id:str}/regenerate", status_code=200)
    async def regenerate(self, conversation_id: str, message_id: str, principal: Principal, state: State) -> Any:
        """A new reply for an agent message (plain actor path: no Story prepare or write). It holds
        the conversation's turn lock: 409 ``turn_in_progress`` while a turn or another regeneration
        runs there, and a turn posted meanwhile gets the same. It finishes (and releases the lock)
        even if the client goes away."""
        from app.turns.regenerate import regenerate

        if not model_configured(state.model, "actor"):
            raise ModelNotConfigured("actor")
        job = asyncio.ensure_future(regenerate(state.turn_pipeline, state.event_hub, principal.user_id,
                                               conversation_id, message_id))  # fmt: skip
        job.add_done_callback(_retrieved)  # a client that left does not leave its error unread
        return message_out(await asyncio.shield(job))


def _retrieved(job: asyncio.Future[Any]) -> None:
    if not job.cancelled():
        job.exception()
