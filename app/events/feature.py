"""How the event log joins the app: one route and one lifespan (after the main one, which made
``app.state.sessions``; it closes first, before the engine is disposed)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar

from app.events.controller import ConversationEventsController
from app.events.hub import EventHub

route_handlers = [ConversationEventsController]


@asynccontextmanager
async def lifespan(app: Litestar) -> AsyncIterator[None]:
    hub = EventHub(app.state.sessions, app.state.settings.database_url)
    await hub.start()
    app.state.event_hub = hub
    try:
        yield
    finally:
        await hub.close()
