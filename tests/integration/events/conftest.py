from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.engine import session_factory
from app.db.models import Conversation
from app.events import EventHub
from tests.integration.turns.conftest import turn_api, world  # noqa: F401 - shared fixtures


@pytest.fixture
async def hub(engine: AsyncEngine, db_url: str) -> AsyncIterator[EventHub]:
    events = EventHub(session_factory(engine), db_url)
    await events.start()
    yield events
    await events.close()


@pytest.fixture
async def conversation_id(engine: AsyncEngine) -> str:
    async with session_factory(engine)() as session, session.begin():
        conv = Conversation(owner_id="alice", kind="group")
        session.add(conv)
    return conv.id
