"""Auto mode's place in the app: the runner of this process, and the look for dead runs.

Every replica looks once a ``REAP_EVERY_S`` for running runs whose lease lapsed and ends them
``interrupted`` (announced with ``auto.ended``): a run is never resumed after its process went
away, whether it crashed or was restarted. On a clean shutdown the runner ends its own runs
``interrupted`` (``server_stopping``) at once.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from litestar import Litestar
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.auto import repository as runs
from app.auto.controller import AutoController
from app.auto.runner import AutoRunner, announce
from app.background import every, running_beside
from app.events.hub import EventHub
from app.turns.repository import REAP_EVERY_S

log = logging.getLogger("app.auto")
route_handlers = [AutoController]


async def reap_once(sessions: async_sessionmaker[AsyncSession], hub: EventHub) -> list[runs.Ended]:
    async with sessions() as session:
        ended = await runs.interrupt_expired(session)
    if ended:
        log.warning("ended %d auto run(s) whose process went away: %s", len(ended), ", ".join(e.run_id for e in ended))
        await announce(hub, ended)
    return ended


@contextlib.asynccontextmanager
async def lifespan(app: Litestar) -> AsyncIterator[None]:
    """After the turn pipeline and the event hub exist; stops first (its runs end before them)."""
    sessions, hub = app.state.sessions, app.state.event_hub
    runner = app.state.auto_runner = AutoRunner(app.state.turn_pipeline, hub)
    try:
        async with running_beside(every(REAP_EVERY_S, lambda: reap_once(sessions, hub), log=log, what="auto reaper"),
                                  name="auto-reaper"):
            yield
    finally:
        await runner.close()
