"""A cancelled turn writes no Story state (issue 27): the Story's write is part of the reply's
save, and a stopped reply is never saved."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest

from app.llm.fakes import Streamed
from tests.integration.conftest import ALICE, Api, hosted, live_replicas
from tests.integration.story.conftest import say, saved_state, state_row, story_group
from tests.integration.turns.fakes import World
from tests.integration.turns.test_cancel import _running_turn_id


@pytest.fixture
async def story_live(settings, world: World) -> AsyncIterator[Api]:
    quiet = msgspec.structs.replace(settings, turn_speculation=False, story_initialize_ahead=False)
    async for apps in hosted(live_replicas(quiet, world.model, n=1)):
        yield apps[0]


async def _settled_revision(engine: Any, conv_id: str, agent_id: str) -> int:
    """The state's revision once the last turn's background adoption has landed (it stops moving)."""
    last = -1
    for _ in range(100):
        revision = (await state_row(engine, conv_id, agent_id)).revision
        if revision == last:
            return revision
        last = revision
        await asyncio.sleep(0.1)
    return last


async def test_a_cancelled_turn_writes_no_story_state(story_live: Api, world: World, engine) -> None:
    conv, (lia, _, _) = await story_group(story_live, world)
    world.handlers["actor"] = lambda req: "莉娅接过钥匙，仔细端详。"
    first = (await say(story_live, conv["id"], "我把铜钥匙递给莉娅"))["agentMessages"][0]
    revision = await _settled_revision(engine, conv["id"], lia["id"])

    world.handlers["actor"] = lambda req: Streamed("莉娅想了想，", *["慢慢地说。"] * 40, delay_s=0.25)
    posted = asyncio.create_task(story_live.client.post(
        f"/v1/conversations/{conv['id']}/turns", json={"content": "我们去档案馆吧"}, headers=ALICE))  # fmt: skip
    turn_id = await _running_turn_id(engine, conv["id"])
    await asyncio.sleep(1.0)  # past the Story's prepare: the actor is writing
    stop = await story_live.client.post(f"/v1/conversations/{conv['id']}/turns/{turn_id}/cancel", headers=ALICE)
    assert stop.status_code == 202, stop.text
    result = (await asyncio.wait_for(posted, 5)).json()
    assert result["status"] == "cancelled" and result["agentMessages"] == [], result
    await asyncio.sleep(0.5)  # anything late would have landed by now

    assert (await state_row(engine, conv["id"], lia["id"])).revision == revision
    assert (await saved_state(engine, conv["id"], lia["id"])).pending_actor.message_id == first["id"]
