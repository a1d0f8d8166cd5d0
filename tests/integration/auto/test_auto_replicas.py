"""Auto mode across server processes: one run per conversation whichever replica is asked, a stop
or a user message on another replica stops it, and a run whose process went away is ended
``interrupted`` — never resumed."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from app.db.engine import session_factory
from app.db.models import AutoRun, utcnow
from tests.integration.conftest import ALICE, Api, live_replicas
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import World

from tests.integration.auto.helpers import (
    auto_state, auto_turns, events, start_auto, until_auto_turn_running, until_ended, until_event,
)  # fmt: skip
from tests.integration.auto.test_auto_mode import _chatty, _group_with_a_message, _slow


async def _first_auto_turn_done(engine: Any, conv_id: str) -> None:
    for _ in range(600):
        if any(t.status == "completed" for t in await auto_turns(engine, conv_id)):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the first auto turn never completed")


async def test_two_replicas_never_run_auto_mode_twice_in_one_conversation(turn_replicas: list[Api], world: World,
                                                                           engine):  # fmt: skip
    a, b = turn_replicas
    conv = await _group_with_a_message(a)
    _chatty(world)
    first, second = await asyncio.gather(start_auto(a, conv["id"], 3, 60_000), start_auto(b, conv["id"], 3, 60_000))
    assert sorted([first.status_code, second.status_code]) == [201, 409], (first.text, second.text)
    won, lost = (first, second) if first.status_code == 201 else (second, first)
    assert lost.json()["code"] == "auto_already_running" and lost.json()["details"]["runId"] == won.json()["runId"]
    again = await start_auto(b, conv["id"], 2)
    assert again.status_code == 409 and again.json()["code"] == "auto_already_running", again.text
    assert (await b.client.delete(f"/v1/conversations/{conv['id']}/auto", headers=ALICE)).status_code == 202
    await until_ended(a, conv["id"])
    assert len(await events(engine, conv["id"], "auto.started")) == 1


async def test_a_stop_sent_to_another_replica_ends_the_run_during_its_delay(turn_replicas: list[Api], world: World,
                                                                           engine):  # fmt: skip
    a, b = turn_replicas
    conv = await _group_with_a_message(a)
    _chatty(world)
    assert (await start_auto(a, conv["id"], 3, 60_000)).status_code == 201
    await _first_auto_turn_done(engine, conv["id"])
    resp = await b.client.delete(f"/v1/conversations/{conv['id']}/auto", headers=ALICE)
    assert resp.status_code == 202, resp.text
    ended = await until_ended(a, conv["id"])
    assert ended["status"] == "stopped" and ended["reason"] == "user_stop" and ended["turnsDone"] == 1, ended
    assert len(await auto_turns(engine, conv["id"])) == 1


async def test_a_user_message_on_another_replica_stops_the_running_auto_turn(turn_replicas: list[Api], world: World,
                                                                             engine):  # fmt: skip
    a, b = turn_replicas
    conv = await _group_with_a_message(a)
    _slow(world)
    slow = world.handlers["actor"]
    world.handlers["actor"] = lambda req: ("好，我们听你说。" if any("停一停" in m.content for m in req.messages)
                                           else slow(req))  # fmt: skip
    assert (await start_auto(a, conv["id"], 5)).status_code == 201
    running = await until_auto_turn_running(engine, conv["id"])
    resp = await post_turn(b, conv["id"], "莉娅，停一停")
    assert resp.status_code == 201 and resp.json()["status"] == "completed", resp.text
    ended = await until_ended(a, conv["id"])
    assert ended["status"] == "stopped" and ended["reason"] == "user_message", ended
    assert [(t.id, t.status) for t in await auto_turns(engine, conv["id"])] == [(running.id, "cancelled")]


async def test_a_run_left_running_by_a_dead_process_is_interrupted_not_resumed(turn_api: Api, world: World, engine):
    conv = await _group_with_a_message(turn_api)
    _chatty(world)
    async with session_factory(engine)() as session:  # what a process that died mid-run leaves behind
        now = utcnow()
        session.add(AutoRun(id="deadrun", conversation_id=conv["id"], owner_id="alice", status="running", turns=5,
                            turns_done=2, delay_ms=0, running_lock=conv["id"], started_at=now - timedelta(seconds=30),
                            deadline_at=now + timedelta(seconds=600), lease_expires_at=now - timedelta(seconds=1)))  # fmt: skip
        await session.commit()
    ended = await until_ended(turn_api, conv["id"])  # the reaper of the live process finds it
    assert ended["runId"] == "deadrun" and ended["status"] == "interrupted" and ended["reason"] == "interrupted"
    assert ended["turnsDone"] == 2
    assert (await until_event(engine, conv["id"], "auto.ended"))[0]["reason"] == "interrupted"
    assert await auto_turns(engine, conv["id"]) == []  # nothing of it ran again
    assert (await start_auto(turn_api, conv["id"], 1)).status_code == 201  # the conversation is free


async def test_after_a_restart_a_run_is_not_resumed(settings, world: World, engine):
    _chatty(world)
    async with live_replicas(settings, world.model, 1) as (api,):
        conv, _ = await make_group(api)
        assert (await post_turn(api, conv["id"], "大家好")).status_code == 201
        assert (await start_auto(api, conv["id"], 4, 60_000)).status_code == 201
        await _first_auto_turn_done(engine, conv["id"])
    async with live_replicas(settings, world.model, 1) as (api,):  # the same database, a new process
        state = await auto_state(api, conv["id"])
        assert state["status"] == "interrupted" and state["reason"] == "server_stopping", state
        await asyncio.sleep(1.5)  # a reaper pass and more: still nothing runs
        assert len(await auto_turns(engine, conv["id"])) == 1
        assert (await auto_state(api, conv["id"]))["turnsDone"] == 1


async def test_a_server_stopping_mid_turn_interrupts_its_run(settings, world: World, engine):
    async with live_replicas(settings, world.model, 1) as (api,):
        conv = await _group_with_a_message(api)
        _slow(world)
        assert (await start_auto(api, conv["id"], 4)).status_code == 201
        running = await until_auto_turn_running(engine, conv["id"])
    async with live_replicas(settings, world.model, 1) as (api,):
        state = await auto_state(api, conv["id"])
        assert state["status"] == "interrupted" and state["reason"] == "server_stopping", state
        assert [(t.id, t.status) for t in await auto_turns(engine, conv["id"])] == [(running.id, "cancelled")]
