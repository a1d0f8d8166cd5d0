"""GET /v1/conversations/{id}/events: Server-Sent Events, replayable, from any server process."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Request, get
from litestar.datastructures import State
from litestar.params import Parameter, QueryParameter
from litestar.response import ServerSentEvent

from app.auth.tokens import Principal
from app.conversations.service import get_owned
from app.errors import ValidationFailed
from app.events.follow import follow

MAX_EVENT_ID = 2**63 - 1


def _last_event_id(raw: str | None) -> int | None:
    if raw is None or not raw.strip():
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_EVENT_ID:
        raise ValidationFailed("Last-Event-ID must be an event id from this stream", code="invalid_last_event_id")
    return value


class ConversationEventsController(Controller):
    path = "/v1/conversations/{conversation_id:str}/events"
    tags = ["events"]

    @get("/")
    async def follow(
        self, conversation_id: str, request: Request, principal: Principal, state: State,
        after: Annotated[int | None, Parameter(ge=0, le=MAX_EVENT_ID, description="replay events with a larger id")] = None,
        turn_id: Annotated[str | None, QueryParameter(name="turnId", max_length=64,
                                                 description="only this turn; the stream ends after its last event")] = None,
    ) -> ServerSentEvent:  # fmt: skip
        """Replays what the client missed (``Last-Event-ID`` wins over ``?after``; neither: from now),
        then continues live. Deltas may come coalesced on replay; keep-alive comments every ~15 s."""
        async with state.sessions() as session:  # a short session: the stream may stay open for hours
            await get_owned(session, principal.user_id, conversation_id)
        start = _last_event_id(request.headers.get("last-event-id"))
        return ServerSentEvent(follow(state.event_hub, conversation_id, start if start is not None else after, turn_id=turn_id))
