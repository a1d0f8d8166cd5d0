"""Conversation events: a durable, replayable log of every SSE event (issue 10, item 5).

``TurnEventSink`` (one per turn) writes events to ``conversation_events``; ``EventHub`` (one per
app, ``app.state.event_hub``) wakes followers in this process and, on PostgreSQL, in every other
server process through ``LISTEN/NOTIFY``; ``GET /v1/conversations/{id}/events`` replays and follows.
"""

from app.events.hub import EventHub
from app.events.sink import DELTA, TERMINAL, TurnEventSink

__all__ = ["DELTA", "TERMINAL", "EventHub", "TurnEventSink"]
