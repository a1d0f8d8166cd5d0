"""Auto mode (issue 28): ``POST …/auto {turns, delayMs}`` runs exactly ``turns`` Continue turns
recorded with ``trigger: auto``, never the same speaker twice in a row; ``DELETE …/auto`` and a
user message stop it (the running auto turn is cancelled, the message is saved and answered)."""

from __future__ import annotations

import asyncio
from typing import Any

from app.llm.fakes import Streamed
from tests.integration.conftest import ALICE, BOB, Api
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import World, speaker

from tests.integration.auto.helpers import (
    agent_messages, auto_state, auto_turns, events, start_auto, until_auto_turn_running, until_ended, until_event,
)  # fmt: skip

HELLO = "大家好，今天好累"


LINES = ("今天的晚霞特别好看，像橘子汽水。", "我刚读完一本讲深海鱼的书。", "周末要不要一起去爬山？",
         "我最近在学做红烧肉，总是太咸。", "你们听过那首关于灯塔的老歌吗？", "楼下新开了一家面包店，香味飘满整条街。",
         "昨晚梦见自己会飞，醒来还有点舍不得。", "猫咪今天把花盆打翻了三次。", "下雨天最适合窝在被子里看电影。",
         "我在阳台种的番茄终于红了。")  # fmt: skip


def _chatty(world: World) -> None:
    """Each reply a different line, so no auto reply is dropped as a repeat of an earlier one."""
    lines = iter(LINES * 3)
    world.handlers["actor"] = lambda req: f"{next(lines)}（{speaker(req)}）"


def _slow(world: World) -> None:
    """Every reply streams far longer than the test: a turn stays running until it is stopped."""
    world.handlers["actor"] = lambda req: Streamed("嗯，", *["我想一想。"] * 200, delay_s=0.2)


async def _group_with_a_message(api: Api) -> dict[str, Any]:
    conv, _ = await make_group(api)
    first = await post_turn(api, conv["id"], HELLO)
    assert first.status_code == 201 and first.json()["status"] == "completed", first.text
    return conv


async def test_auto_mode_runs_exactly_the_turns_asked_never_the_same_speaker_twice(turn_api: Api, world: World, engine):
    conv = await _group_with_a_message(turn_api)
    _chatty(world)
    before = await agent_messages(engine, conv["id"])
    resp = await start_auto(turn_api, conv["id"], turns=5)
    assert resp.status_code == 201, resp.text
    started = resp.json()
    assert started["status"] == "running" and started["turns"] == 5 and started["delayMs"] == 0

    ended = await until_ended(turn_api, conv["id"])
    assert ended["status"] == "completed" and ended["reason"] == "turns_done", ended
    assert ended["turnsDone"] == 5 and ended["runId"] == started["runId"]

    turns = await auto_turns(engine, conv["id"])
    assert len(turns) == 5 and all(t.status == "completed" and t.user_message_id is None for t in turns)
    view = (await turn_api.client.get(f"/v1/conversations/{conv['id']}/turns/{turns[0].id}", headers=ALICE)).json()
    assert view["trigger"] == "auto"
    messages = await agent_messages(engine, conv["id"])
    auto = messages[len(before):]
    assert [m.turn_id for m in auto] == [t.id for t in turns]  # one reply per auto turn
    speakers = [m.agent_id for m in messages]
    assert all(a != b for a, b in zip(speakers[len(before) - 1:], speakers[len(before):], strict=False)), speakers

    assert [e["runId"] for e in await events(engine, conv["id"], "auto.started")] == [started["runId"]]
    done = await until_event(engine, conv["id"], "auto.ended")
    assert done == [{"runId": started["runId"], "conversationId": conv["id"], "status": "completed",
                     "reason": "turns_done", "turns": 5, "turnsDone": 5}]  # fmt: skip
    started_events = await events(engine, conv["id"], "turn.started")
    assert sum(1 for e in started_events if e.get("trigger") == "auto") == 5


async def test_a_member_alone_speaks_every_auto_turn(turn_api: Api, world: World, engine):
    conv, agents = await make_group(turn_api)
    _chatty(world)
    assert (await post_turn(turn_api, conv["id"], HELLO)).status_code == 201
    for other in agents[1:]:
        resp = await turn_api.client.patch(f"/v1/conversations/{conv['id']}/members/{other['id']}",
                                           json={"muted": True}, headers=ALICE)  # fmt: skip
        assert resp.status_code == 200, resp.text
    assert (await start_auto(turn_api, conv["id"], turns=2)).status_code == 201
    ended = await until_ended(turn_api, conv["id"])
    assert ended["status"] == "completed" and ended["turnsDone"] == 2, ended
    turns = {t.id for t in await auto_turns(engine, conv["id"])}
    assert {m.agent_id for m in await agent_messages(engine, conv["id"]) if m.turn_id in turns} == {agents[0]["id"]}


async def test_delete_stops_auto_mode_and_cancels_its_running_turn(turn_api: Api, world: World, engine):
    conv = await _group_with_a_message(turn_api)
    _slow(world)
    assert (await start_auto(turn_api, conv["id"], turns=5)).status_code == 201
    running = await until_auto_turn_running(engine, conv["id"])
    resp = await turn_api.client.delete(f"/v1/conversations/{conv['id']}/auto", headers=ALICE)
    assert resp.status_code == 202 and resp.json()["status"] == "stopping", resp.text

    ended = await until_ended(turn_api, conv["id"])
    assert ended["status"] == "stopped" and ended["reason"] == "user_stop" and ended["turnsDone"] == 0, ended
    turns = await auto_turns(engine, conv["id"])
    assert [(t.id, t.status) for t in turns] == [(running.id, "cancelled")]
    again = await turn_api.client.delete(f"/v1/conversations/{conv['id']}/auto", headers=ALICE)
    assert again.status_code == 409 and again.json()["code"] == "auto_not_running", again.text
    assert (await turn_api.client.delete(f"/v1/conversations/{conv['id']}/auto", headers=BOB)).status_code == 404


async def test_a_user_message_stops_auto_mode_within_one_reply_and_is_answered(turn_api: Api, world: World, engine):
    conv = await _group_with_a_message(turn_api)
    _slow(world)
    assert (await start_auto(turn_api, conv["id"], turns=5)).status_code == 201
    slow = world.handlers["actor"]
    world.handlers["actor"] = lambda req: (f"我听着呢，你说。（{speaker(req)}）"
                                           if any("我想说句话" in m.content for m in req.messages) else slow(req))
    running = await until_auto_turn_running(engine, conv["id"])

    resp = await post_turn(turn_api, conv["id"], "莉娅，等一下，我想说句话")
    assert resp.status_code == 201, resp.text
    answered = resp.json()
    assert answered["status"] == "completed" and answered["userMessage"]["content"] == "莉娅，等一下，我想说句话"
    assert answered["agentMessages"] and answered["trigger"] == "user"

    ended = await until_ended(turn_api, conv["id"])
    assert ended["status"] == "stopped" and ended["reason"] == "user_message", ended
    turns = await auto_turns(engine, conv["id"])
    assert [(t.id, t.status) for t in turns] == [(running.id, "cancelled")]  # no auto turn after the message
    saved = [m for m in await agent_messages(engine, conv["id"]) if m.turn_id == running.id]
    assert saved == []  # the reply being written was taken back


async def test_a_user_message_between_auto_turns_ends_the_run_with_the_message(turn_api: Api, world: World, engine):
    """No auto turn holds the lock while the run pauses between turns: the message is stored at
    once, and the stop is written in its transaction, so no auto turn follows it."""
    conv = await _group_with_a_message(turn_api)
    _chatty(world)
    assert (await start_auto(turn_api, conv["id"], turns=5, delay_ms=20_000)).status_code == 201
    while (state := await auto_state(turn_api, conv["id"]))["turnsDone"] < 1:  # the first turn, then the pause
        await asyncio.sleep(0.05)
    assert state["status"] == "running", state

    resp = await post_turn(turn_api, conv["id"], "莉娅，等一下，我想说句话")
    assert resp.status_code == 201 and resp.json()["status"] == "completed", resp.text
    ended = await until_ended(turn_api, conv["id"], timeout_s=5)  # woken, not at the end of its 20 s pause
    assert ended["status"] == "stopped" and ended["reason"] == "user_message" and ended["turnsDone"] == 1, ended
    assert [t.status for t in await auto_turns(engine, conv["id"])] == ["completed"]


async def test_auto_mode_limits(turn_api: Api, settings):
    conv, _ = await make_group(turn_api)
    empty = await start_auto(turn_api, conv["id"], turns=2)
    assert empty.status_code == 422 and empty.json()["code"] == "nothing_to_continue", empty.text
    missing = await turn_api.client.get(f"/v1/conversations/{conv['id']}/auto", headers=ALICE)
    assert missing.status_code == 404 and missing.json()["code"] == "auto_run_not_found"
    assert (await post_turn(turn_api, conv["id"], HELLO)).status_code == 201

    limit = settings.limits.max_auto_turns
    over = await start_auto(turn_api, conv["id"], turns=limit + 1)
    assert over.status_code == 422 and over.json()["code"] == "auto_turns_over_limit", over.text
    assert over.json()["details"] == {"turns": limit + 1, "max": limit}
    for body in ({"turns": 0}, {"turns": 2, "delayMs": 60_001}, {"turns": 2, "delayMs": -1}, {"delayMs": 10}):
        bad = await turn_api.client.post(f"/v1/conversations/{conv['id']}/auto", json=body, headers=ALICE)
        assert bad.status_code == 422 and bad.json()["code"] == "validation_failed", (body, bad.text)
    other = await turn_api.client.post(f"/v1/conversations/{conv['id']}/auto", json={"turns": 1}, headers=BOB)
    assert other.status_code == 404


async def test_auto_mode_ends_at_its_time_limit(turn_api: Api, world: World, engine):
    conv = await _group_with_a_message(turn_api)
    _chatty(world)
    resp = await start_auto(turn_api, conv["id"], turns=3, delay_ms=60_000)
    assert resp.status_code == 201, resp.text
    # the run's deadline is a row fact: move it to now, as the clock would
    from sqlalchemy import update

    from app.db.engine import session_factory
    from app.db.models import AutoRun, utcnow

    await until_auto_turn_running_or_done(engine, conv["id"])
    async with session_factory(engine)() as session:
        await session.execute(update(AutoRun).where(AutoRun.id == resp.json()["runId"]).values(deadline_at=utcnow()))
        await session.commit()
    ended = await until_ended(turn_api, conv["id"])
    assert ended["status"] == "completed" and ended["reason"] == "time_limit" and ended["turnsDone"] == 1, ended


async def until_auto_turn_running_or_done(engine: Any, conv_id: str) -> None:
    for _ in range(600):
        if any(t.status == "completed" for t in await auto_turns(engine, conv_id)):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the first auto turn never completed")
