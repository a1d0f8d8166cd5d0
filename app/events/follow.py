"""Follow a conversation's events: replay from the log after an id, then continue live.

Deltas reach a follower twice in this process (live, then in a coalesced row) and may overlap on
a reconnect; ``_DraftCursor`` keeps, per draft, how many characters were sent and trims by
``offset``, so every character is sent once and in order. A coalesced row with nothing new is
sent as a bare ``id:`` (no event is dispatched; the client's Last-Event-ID still moves on).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from app.db.models import Turn
from app.events import log as event_log
from app.events.hub import EventHub
from app.events.sink import CLOSED, DELTA, TERMINAL

KEEPALIVE_S = 15.0
ORPHAN_TURN_GRACE_S = 5.0


class _DraftCursor:
    def __init__(self) -> None:
        self.sent: dict[str, int] = {}

    def from_row(self, data: dict[str, Any]) -> dict[str, Any] | None:
        """A logged delta: the client asked from here, so an unseen draft is sent as it is."""
        return self._trim(data, live=False)

    def from_live(self, data: dict[str, Any]) -> dict[str, Any] | None:
        """A live delta is sent only if it continues what was sent; a gap waits for the row."""
        return self._trim(data, live=True)

    def _trim(self, data: dict[str, Any], *, live: bool) -> dict[str, Any] | None:
        draft, offset, text = data.get("draftId"), data.get("offset"), str(data.get("delta", ""))
        if draft is None or not isinstance(offset, int):
            return data
        sent = self.sent.get(draft)
        if sent is None:
            if live and offset > 0:
                return None
            sent = offset
        if offset > sent:
            if live:
                return None
            sent = offset
        end = offset + len(text)
        if end <= sent:
            return None
        self.sent[draft] = end
        return data if offset == sent else {**data, "delta": text[sent - offset :], "offset": sent}


def _sse(event: str, data: dict[str, Any], event_id: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"event": event, "data": json.dumps(data, ensure_ascii=False, default=str)}
    if event_id is not None:
        out["id"] = event_id
    return out


async def _turn_is_over(hub: EventHub, turn_id: str) -> bool:
    """A turn whose process died never logs a terminal event; its row says it is over."""
    async with hub.sessions() as session:
        turn = await session.get(Turn, turn_id)
    if turn is None:
        return True
    if turn.status == "running" or turn.completed_at is None:
        return False
    return time.time() - turn.completed_at.timestamp() > ORPHAN_TURN_GRACE_S


def _last_of_turn(row: event_log.StoredEvent) -> bool:
    """A ``?turnId=`` stream ends with its turn's last event: ``turn.closed``, or a terminal event
    that announces nothing more (a failed turn, or a turn without late parts)."""
    return row.event == CLOSED or (row.event in TERMINAL and not row.data.get("more"))


async def _turn_stream_over(hub: EventHub, conversation_id: str, turn_id: str, up_to_id: int) -> bool:
    rows = await event_log.read_events(hub.sessions, conversation_id, turn_id, (*TERMINAL, CLOSED), up_to_id)
    return any(_last_of_turn(row) for row in rows)


async def follow(
    hub: EventHub, conversation_id: str, after: int | None, *, turn_id: str | None = None,
    keepalive_s: float = KEEPALIVE_S,
) -> AsyncIterator[dict[str, Any]]:
    """SSE dicts for Litestar's ``ServerSentEvent``. ``after=None`` starts from now."""
    sub = hub.subscribe(conversation_id)  # before reading the log: nothing slips between the two
    try:
        last = after if after is not None else await event_log.latest_id(hub.sessions, conversation_id)
        if turn_id is not None and await _turn_stream_over(hub, conversation_id, turn_id, last):
            return
        drafts = _DraftCursor()
        read = True
        while True:
            while read:
                rows = await event_log.read_after(hub.sessions, conversation_id, last, turn_id=turn_id)
                read = len(rows) == event_log.READ_BATCH
                for row in rows:
                    last = row.id
                    if row.event == DELTA:
                        data = drafts.from_row(row.data)
                        yield _sse(DELTA, data, row.id) if data is not None else {"id": row.id, "data": None}
                        continue
                    yield _sse(row.event, row.data, row.id)
                    if turn_id is not None and _last_of_turn(row):
                        return
            item = await sub.next(keepalive_s)
            if item is None:
                yield {"comment": "keep-alive", "data": None}
                read = True  # the safety net under a missed notification
                if turn_id is not None and await _turn_is_over(hub, turn_id):
                    rows = await event_log.read_after(hub.sessions, conversation_id, last, turn_id=turn_id, limit=1)
                    if not rows:
                        return
                continue
            kind, payload = item
            if kind == "end":
                return
            if kind == "wake":
                read = True
            elif kind == "live":
                event, data = payload
                if turn_id is not None and data.get("turnId") != turn_id:
                    continue
                if (data := drafts.from_live(data)) is not None:
                    yield _sse(event, data)
    finally:
        hub.unsubscribe(sub)
