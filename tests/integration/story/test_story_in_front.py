"""At most one Story call in front of the actor (issue 10): the settle pass runs beside the
actor and lands in the same compare-and-swap write; a group's silent agents are initialised
after a turn, in the background, so their first turn only prepares."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from tests.integration.conftest import ALICE, Api
from tests.integration.story.conftest import (
    CUE_PATROL, NORMAL, STORY_ON, saved_state, say, state_row, story_client, story_group, story_world,
)
from tests.integration.turns.fakes import World, select as choose

SETTLE_G0 = {"status": "assessed", "emotion": None, "new_pursuit": "", "line_progress": [],
             "completed_goals": [{"goal_id": "g0", "evidence": "指尖停在柄端的旧徽记上"}]}  # fmt: skip


@pytest.fixture
def ahead_world() -> World:
    return story_world()


@pytest.fixture
async def ahead_api(settings, ahead_world: World) -> AsyncIterator[Api]:
    async with story_client(settings, ahead_world, initialize_ahead=True) as api:
        yield api


async def test_the_settle_pass_runs_while_the_actor_writes_and_is_saved_with_the_reply(story_api, world, engine) -> None:
    conv, (lia, _, _) = await story_group(story_api, world)
    world.handlers["actor"] = ["莉娅接过钥匙，指尖停在柄端的旧徽记上。", "巡逻队的脚步声越来越近。"]
    world.handlers["story.prepare"] = [NORMAL, CUE_PATROL]  # turn 2 interrupts the key event
    seen: list[list[str]] = []

    def settle(request):
        seen.append(list(world.calls))  # what had been asked when the settle was answered
        return SETTLE_G0

    world.handlers["story.settle"] = settle
    await say(story_api, conv["id"], "我把铜钥匙递给莉娅。")
    world.delay = 0.05
    start = len(world.calls)
    t2 = await say(story_api, conv["id"], "我去迎接巡逻队。")
    story = t2["agentMessages"][0]["metadata"]["story"]
    turn_calls = seen[0][start:]
    # Only the prepare stood before the actor: the actor was already asked when the settle was answered.
    assert turn_calls.index("story.prepare") < turn_calls.index("actor") < turn_calls.index("story.settle")
    assert "narrative_settle_event:settled" in story["toolCalls"] and story["outcome"] == "waiting_for_acceptance", story
    assert story["besideMs"] >= 50  # one settle call at 50 ms, beside the actor
    state = await saved_state(engine, conv["id"], lia["id"])  # the one CAS write holds the settlement
    assert {g.id for g in state.narrative.cycle.pending if g.done} == {"g0"}
    assert not [e for e in state.events if e.closed]


async def test_a_dropped_reply_cancels_the_settle_beside_it_and_the_event_stays_queued(story_api, world, engine) -> None:
    conv, (lia, _, _) = await story_group(story_api, world)
    world.handlers["story.prepare"] = [NORMAL, CUE_PATROL]
    settling, cancelled = asyncio.Event(), asyncio.Event()

    async def hang(request):
        settling.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def fail_once_settling(request):
        await settling.wait()
        raise RuntimeError("actor down")

    world.handlers["actor"] = ["莉娅接过钥匙，指尖停在柄端的旧徽记上。", fail_once_settling]
    world.handlers["story.settle"] = hang
    await say(story_api, conv["id"], "我把铜钥匙递给莉娅。")
    before = await state_row(engine, conv["id"], lia["id"])
    resp = await story_api.client.post(f"/v1/conversations/{conv['id']}/turns", json={"content": "我去迎接巡逻队。"},
                                       headers=ALICE)  # fmt: skip
    assert resp.status_code == 201 and resp.json()["agentMessages"] == []  # the turn did not wait 30 s
    await asyncio.wait_for(cancelled.wait(), 5)
    after = await state_row(engine, conv["id"], lia["id"])
    assert after.revision == before.revision and after.envelope == before.envelope  # nothing half-written


async def _wait_initialised(engine, conv_id: str, agent_ids: list[str]) -> None:
    for _ in range(200):
        rows = [await state_row(engine, conv_id, a) for a in agent_ids]
        if all(r is not None and r.envelope is not None for r in rows):
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the silent agents were not initialised in the background")


async def test_silent_agents_are_initialised_after_the_turn_so_their_first_turn_only_prepares(ahead_api, ahead_world, engine) -> None:
    world = ahead_world
    conv, (lia, heng, tiao) = await story_group(ahead_api, world)
    t1 = await say(ahead_api, conv["id"], "大家好，我们在城门口。")
    assert [m["agentId"] for m in t1["agentMessages"]] == [lia["id"]]
    await _wait_initialised(engine, conv["id"], [heng["id"], tiao["id"]])
    row = await state_row(engine, conv["id"], heng["id"])
    assert row.status == "initialized" and row.revision == 1
    assert row.last_outcome["toolCalls"] == ["story_init:ok", "narrative_plan_cycle:planned"]
    report = (await ahead_api.client.get(f"/v1/conversations/{conv['id']}/story/{heng['id']}", headers=ALICE)).json()
    assert report["status"] == "initialized" and report["report"]["foreground"]["id"] == "ev-key"

    world.handlers["select"] = choose(heng["id"])
    start = len(world.calls)
    t2 = await say(ahead_api, conv["id"], "周衡，你怎么看？")
    story = t2["agentMessages"][0]["metadata"]["story"]
    turn = world.calls[start:]
    assert [c for c in turn[:turn.index("actor")] if c.startswith(("story.", "story_init"))] == ["story.prepare"]
    assert story["outcome"] == "waiting_for_acceptance" and story["revision"] == 2 and story["guided"]
    assert story["toolCalls"] == ["pov_prepare_turn", "narrative_deal_beat"]
    assert (await saved_state(engine, conv["id"], heng["id"])).pending_actor.message_id == t2["agentMessages"][0]["id"]


async def test_an_agent_with_a_story_is_not_initialised_again(ahead_api, ahead_world, engine) -> None:
    world = ahead_world
    conv, (lia, heng, tiao) = await story_group(ahead_api, world)
    for text in ("大家好。", "今天天气不错。", "你们在做什么？"):
        await say(ahead_api, conv["id"], text)
        await _wait_initialised(engine, conv["id"], [heng["id"], tiao["id"]])
    inits = [r for r in world.model.history if r.purpose == "story_init.world"]
    assert len(inits) == 3  # one per agent: lia in her first turn, the other two once, after it


async def test_an_agent_that_only_made_a_cross_reply_is_initialised_after_the_turn(ahead_api, ahead_world, engine) -> None:
    world = ahead_world
    conv, (lia, heng, tiao) = await story_group(ahead_api, world)
    world.handlers["cross_reply.plan"] = lambda req: {"reply": {"fromAgentId": heng["id"], "toAgentId": lia["id"]},
                                                      "reason": "补充"}  # fmt: skip
    t1 = await say(ahead_api, conv["id"], "大家好，我们在城门口。")
    assert [(m["agentId"], m["replyKind"]) for m in t1["agentMessages"]] == [(lia["id"], "primary"), (heng["id"], "cross")]
    primary, cross = t1["agentMessages"]
    assert "story" in primary["metadata"] and "story" not in cross["metadata"]  # as the README says
    await _wait_initialised(engine, conv["id"], [heng["id"], tiao["id"]])  # a cross reply runs no Story


async def test_a_failed_initialisation_ahead_is_not_retried_on_every_turn(ahead_api, ahead_world, engine) -> None:
    world = ahead_world
    conv, (lia, heng, tiao) = await story_group(ahead_api, world)
    world.handlers["story_init.world"] = RuntimeError("model down")

    def heng_inits() -> int:
        return sum(1 for r in world.model.history
                   if r.purpose == "story_init.world" and "周衡" in r.messages[0].content)  # fmt: skip

    await say(ahead_api, conv["id"], "大家好。")
    for _ in range(100):  # the background attempt after turn 1
        if heng_inits():
            break
        await asyncio.sleep(0.02)
    tried = heng_inits()
    assert tried >= 1
    await say(ahead_api, conv["id"], "还在吗？")
    await asyncio.sleep(0.2)
    assert heng_inits() == tried  # backed off: not paid for again on the next turn
    assert (await state_row(engine, conv["id"], heng["id"])).envelope is None


async def test_switching_the_story_on_or_adding_a_member_initialises_ahead(ahead_api, ahead_world, engine) -> None:
    conv, (lia, heng, tiao) = await story_group(ahead_api, ahead_world, story={"enabled": False})
    await asyncio.sleep(0.1)
    assert await state_row(engine, conv["id"], lia["id"]) is None  # Story off: nothing is set up
    resp = await ahead_api.client.patch(f"/v1/conversations/{conv['id']}",
                                        json={"settings": {"story": {"enabled": True, "modelConfigId": "default"}}},
                                        headers=ALICE)  # fmt: skip
    assert resp.status_code == 200, resp.text
    await _wait_initialised(engine, conv["id"], [lia["id"], heng["id"], tiao["id"]])
    newcomer = await ahead_api.agent("阿乐", capabilities={"playful": 0.9})
    resp = await ahead_api.client.post(f"/v1/conversations/{conv['id']}/members", json={"agentId": newcomer["id"]},
                                       headers=ALICE)  # fmt: skip
    assert resp.status_code == 200, resp.text
    await _wait_initialised(engine, conv["id"], [newcomer["id"]])


async def test_an_initialisation_ahead_that_outlasts_the_wait_is_cancelled_so_the_turn_saves(ahead_api, ahead_world, engine) -> None:
    """A slow model: the first turn comes while the initialisation ahead (started when the group
    was made) is still running after the turn's bounded wait (one call's timeout). The job is
    cancelled and the turn initialises itself; before, the job's late write won the
    compare-and-swap and the turn's save was rejected as stale."""
    world = ahead_world
    init, plan = world.handlers["story_init.world"], world.handlers["story.plan_cycle"]

    async def slow(answer):
        await asyncio.sleep(0.8)  # under the call timeout (1 s); world and plan together outlast the wait
        return answer

    world.handlers["story_init.world"] = lambda req: slow(init)
    world.handlers["story.plan_cycle"] = lambda req: slow(plan)
    conv, (lia, _, _) = await story_group(ahead_api, world, story={**STORY_ON, "modelCallTimeoutMs": 1000})
    t1 = await say(ahead_api, conv["id"], "大家好，我们在城门口。")  # at once, while lia's job runs
    story = t1["agentMessages"][0]["metadata"]["story"]
    assert story["outcome"] == "waiting_for_acceptance", story
    await asyncio.sleep(1.0)  # a job that was not cancelled would have written by now
    row = await state_row(engine, conv["id"], lia["id"])
    assert row.status == "waiting_for_acceptance" and row.revision == story["revision"]


async def test_a_conversations_background_story_jobs_run_one_at_a_time(ahead_api, ahead_world, engine) -> None:
    """Switching the Story on initialises three members ahead: one after another, so a local model
    server keeps a slot for the user's turn (before, all three world calls ran at once)."""
    world = ahead_world
    init, active, most = world.handlers["story_init.world"], [0], [0]

    async def counted(req):
        active[0] += 1
        most[0] = max(most[0], active[0])
        try:
            await asyncio.sleep(0.05)
            return init
        finally:
            active[0] -= 1

    world.handlers["story_init.world"] = counted
    conv, agents = await story_group(ahead_api, world)
    await _wait_initialised(engine, conv["id"], [a["id"] for a in agents])
    assert most[0] == 1
    assert world.calls.count("story_init.world") == 3
