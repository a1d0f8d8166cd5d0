"""Story with speculation on: a speculative actor's Story prepare is discarded with it, so only
the agent the selection confirms gets a Story write (SQLite and PostgreSQL)."""

from __future__ import annotations

import msgspec
from litestar.testing import AsyncTestClient

from app.main import create_app
from tests.integration.conftest import Api
from tests.integration.story.conftest import choose, say, state_row, story_group, story_world


async def test_a_speculative_miss_writes_no_story_state(settings, engine) -> None:
    world = story_world()
    # Only the scorer's pick; no initialisation ahead (it would give the silent agents a state after the turn).
    narrow = msgspec.structs.replace(settings, turn_speculation_extra=0, story_initialize_ahead=False)
    async with AsyncTestClient(create_app(narrow, model=world.model), timeout=30) as client:
        api = Api(client, settings)
        conv, (lia, heng, tiao) = await story_group(api, world)
        world.handlers["select"] = choose(tiao["id"])  # the scorer prefers the comforter for sadness
        body = await say(api, conv["id"], "我今天好难过")
    spec = body["orchestration"]["speculation"]
    assert spec["started"] and tiao["id"] not in spec["started"] and spec["misses"] == spec["started"]
    [message] = body["agentMessages"]
    assert message["agentId"] == tiao["id"] and message["metadata"]["speculation"] == "miss"
    assert message["metadata"]["story"]["outcome"] == "waiting_for_acceptance"
    for agent_id in spec["misses"]:  # its prepare ran, nothing of it was saved
        row = await state_row(engine, conv["id"], agent_id)
        assert row is None or (row.envelope is None and row.revision == 0)
    assert (await state_row(engine, conv["id"], tiao["id"])).revision == 1
