"""Compare-and-swap on ``story_states.revision``: exactly one of concurrent writers wins."""

from __future__ import annotations

import asyncio

import pytest

from app.db.engine import session_factory
from app.db.models import Agent, Conversation
from app.errors import StaleStateWrite
from app.story import repository
from app.story.repository import StoryScope


async def _scope(engine) -> StoryScope:
    async with session_factory(engine)() as s:
        s.add(Agent(id="lia", name="莉娅"))
        s.add(Conversation(id="c1", owner_id="alice", kind="group"))
        await s.commit()
    return StoryScope("alice", "c1", "lia")


async def test_ensure_creates_one_row_even_when_racing(engine) -> None:
    scope = await _scope(engine)
    sessions = session_factory(engine)

    async def one():
        async with sessions() as s:
            return await repository.ensure(s, scope)

    rows = await asyncio.gather(*(one() for _ in range(5)))
    assert len({r.id for r in rows}) == 1 and all(r.revision == 0 and r.envelope is None for r in rows)


async def test_write_with_a_stale_revision_is_rejected_with_both_revisions(engine) -> None:
    scope = await _scope(engine)
    sessions = session_factory(engine)
    async with sessions() as s:
        row = await repository.ensure(s, scope)
        assert await repository.compare_and_swap(s, row.id, 0, status="waiting_for_acceptance", envelope=b"a") == 1
    async with sessions() as s:
        with pytest.raises(StaleStateWrite) as err:
            await repository.compare_and_swap(s, row.id, 0, status="waiting_for_acceptance", envelope=b"b")
    assert (err.value.expected_revision, err.value.actual_revision) == (0, 1)
    async with sessions() as s:
        stored = await repository.read(s, scope)
    assert stored.revision == 1 and stored.envelope == b"a"


async def test_concurrent_writers_on_the_same_revision_exactly_one_wins(engine) -> None:
    scope = await _scope(engine)
    sessions = session_factory(engine)
    async with sessions() as s:
        row = await repository.ensure(s, scope)

    async def writer(i: int) -> str:
        async with sessions() as s:
            try:
                await repository.compare_and_swap(s, row.id, 0, status="waiting_for_acceptance", envelope=f"w{i}".encode())
                return f"w{i}"
            except StaleStateWrite:
                return "stale"

    results = await asyncio.gather(*(writer(i) for i in range(8)))
    winners = [r for r in results if r != "stale"]
    assert len(winners) == 1
    async with sessions() as s:
        stored = await repository.read(s, scope)
    assert stored.revision == 1 and stored.envelope == winners[0].encode()
