"""Dead turns end fast: every replica looks once a ``REAP_EVERY_S`` for running turns whose lease
expired (their process died or stopped), ends them ``failed: turn_abandoned`` and announces
``turn.failed`` on the conversation's event log, so a follower of that turn hears it within the
lease time instead of waiting for its keep-alive check, and the conversation takes a new turn.

Several replicas may look at once: the update re-checks the lease and returns only the rows it
changed, so each dead turn is ended and announced by exactly one of them.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from litestar import Litestar
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.background import every, running_beside
from app.events.hub import EventHub
from app.turns import repository

log = logging.getLogger("app.turns")


async def announce(hub: EventHub, abandoned: list[repository.Abandoned]) -> None:
    for dead in abandoned:
        try:
            await hub.append(dead.conversation_id, dead.turn_id, [("turn.failed", dead.event())])
        except Exception:  # noqa: BLE001 - followers still notice through the turn row
            log.warning("could not announce abandoned turn %s", dead.turn_id, exc_info=True)


async def reap_once(sessions: async_sessionmaker[AsyncSession], hub: EventHub) -> list[repository.Abandoned]:
    async with sessions() as session:
        abandoned = await repository.abandon_expired(session)
    if abandoned:
        log.warning("ended %d abandoned turn(s): %s", len(abandoned), ", ".join(a.turn_id for a in abandoned))
        await announce(hub, abandoned)
    return abandoned


async def reap_forever(sessions: async_sessionmaker[AsyncSession], hub: EventHub,
                       every_s: float = repository.REAP_EVERY_S) -> None:  # fmt: skip
    await every(every_s, lambda: reap_once(sessions, hub), log=log, what="reaper")


@contextlib.asynccontextmanager
async def lifespan(app: Litestar) -> AsyncIterator[None]:
    """After the event hub's lifespan (it needs the hub); stops first."""
    async with running_beside(reap_forever(app.state.sessions, app.state.event_hub), name="turn-reaper"):
        yield
