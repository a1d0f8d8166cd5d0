"""GET /v1/conversations/{id}/events: Server-Sent Events, replayable, from any server process."""

from __future__ import annotations

import re
from typing import Annotated

from litestar import Controller, Request, get
from litestar.datastructures import State
from litestar.params import Parameter, QueryParameter
from litestar.response import ServerSentEvent

from app.auth.tokens import Principal
from app.conversations.service import get_owned
from app.errors import ClientError
from app.events import log as event_log
from app.events.follow import follow

MAX_EVENT_ID = 2**63 - 1
# The ids this server issues: the event table's key, in plain decimal. Python's int() would also
# take "+3", " 3", "1_000" and "٣"; none of them is an id a client was ever sent.
_EVENT_ID = re.compile(r"(?:0|[1-9][0-9]{0,18})")


def parse_last_event_id(raw: str | None) -> int | None:
    if raw is None or raw == "":
        return None
    if not _EVENT_ID.fullmatch(raw) or int(raw) > MAX_EVENT_ID:
        raise ClientError(
            "Last-Event-ID must be an event id this server sent (a plain decimal number)",
            code="invalid_last_event_id", details={"lastEventId": raw[:40]},
        )
    return int(raw)


async def _issued(state: State, start: int | None, source: str) -> int | None:
    """An id past every event ever stored was never sent: a 400, not a stream that waits silently."""
    if start is None or start == 0:
        return start
    latest = await event_log.latest_issued_id(state.sessions)
    if start > latest:
        raise ClientError(
            f"{source} {start} is past the newest event ({latest}); resume from an id this server sent",
            code="invalid_last_event_id", details={source: start, "latestEventId": latest},
        )
    return start


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
        then continues live. Deltas may come coalesced on replay; keep-alive comments every ~15 s.

        ``Last-Event-ID`` must be an id the server sent: a plain decimal (no sign, spaces or
        separators) no larger than the newest event stored; anything else is a 400
        ``invalid_last_event_id``, as is an ``after`` past the newest event. ``0`` replays from
        the start."""
        async with state.sessions() as session:  # a short session: the stream may stay open for hours
            await get_owned(session, principal.user_id, conversation_id)
        header = parse_last_event_id(request.headers.get("last-event-id"))
        start = await _issued(state, header if header is not None else after,
                              "Last-Event-ID" if header is not None else "after")  # fmt: skip
        return ServerSentEvent(follow(state.event_hub, conversation_id, start, turn_id=turn_id))
