"""Stop: ``POST /v1/conversations/{cid}/turns/{tid}/cancel`` ends a running turn. A reply already
saved stays, the one being written is taken back (``message.discarded``) and never saved, the turn
ends ``cancelled`` with ``turn.cancelled``, on the replica running it or on another one."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from sqlalchemy import select

from app.db.engine import session_factory
from app.db.models import Turn
from app.llm.fakes import Streamed
from tests.integration.conftest import ALICE, BOB, Api
from tests.integration.events.sse import parse
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import World, speaker

BOTH = "莉娅和周衡，我今天好难过"


def _slow_planner(world: World) -> None:
    """莉娅 answers at once; 周衡 streams slowly, for far longer than the test."""

    def actor(req: Any) -> Any:
        if speaker(req) == "周衡":
            return Streamed("先别急，", *["我们一步一步来。"] * 40, delay_s=0.25)
        return "我在这里陪着你。"

    world.handlers["actor"] = actor


async def _running_turn_id(engine: Any, conv_id: str) -> str:
    """The id of the conversation's running turn, read from the database as soon as it is there."""
    async with session_factory(engine)() as session:
        for _ in range(200):
            turn_id = await session.scalar(select(Turn.id).where(Turn.conversation_id == conv_id, Turn.status == "running"))
            if turn_id is not None:
                return turn_id
            await session.rollback()
            await asyncio.sleep(0.05)
    raise AssertionError("the turn never started")


async def _cancel(api: Api, conv_id: str, turn_id: str, headers: dict[str, str] = ALICE) -> Any:
    return await api.client.post(f"/v1/conversations/{conv_id}/turns/{turn_id}/cancel", headers=headers)


async def _wait_for_saved_reply(api: Api, conv_id: str) -> None:
    for _ in range(200):
        resp = await api.client.get(f"/v1/conversations/{conv_id}/messages", params={"limit": 50}, headers=ALICE)
        if any(m.get("role") == "agent" for m in resp.json()["items"]):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("no reply was saved")


async def _stop_mid_turn(starter: Api, stopper: Api, world: World, engine: Any) -> tuple[dict[str, Any], dict[str, Any], float]:
    _slow_planner(world)
    conv, _ = await make_group(starter)
    posted = asyncio.create_task(post_turn(starter, conv["id"], BOTH))
    turn_id = await _running_turn_id(engine, conv["id"])
    await _wait_for_saved_reply(starter, conv["id"])
    await asyncio.sleep(0.6)  # 周衡's first words are out (a visible draft)
    began = time.perf_counter()
    resp = await _cancel(stopper, conv["id"], turn_id)
    assert resp.status_code == 202, resp.text
    assert resp.json() == {"turnId": turn_id, "status": "cancelling"}
    result = (await asyncio.wait_for(posted, 5)).json()
    return conv, result, time.perf_counter() - began


async def test_stop_keeps_the_saved_reply_and_never_saves_the_one_being_written(turn_replicas: list[Api], world: World, engine):
    turn_api = turn_replicas[0]
    conv, result, took = await _stop_mid_turn(turn_api, turn_api, world, engine)
    assert took < 1.0, took
    assert result["status"] == "cancelled" and result["error"]["code"] == "turn_cancelled", result
    assert [m["content"] for m in result["agentMessages"]] == ["我在这里陪着你。"]
    view = (await turn_api.client.get(f"/v1/conversations/{conv['id']}/turns/{result['turnId']}", headers=ALICE)).json()
    assert view["status"] == "cancelled"
    items = (await turn_api.client.get(f"/v1/conversations/{conv['id']}/messages", params={"limit": 50},
                                       headers=ALICE)).json()["items"]  # fmt: skip
    assert sorted(m["content"] for m in items if m["role"] == "agent") == ["我在这里陪着你。"]
    assert not any("一步一步" in m["content"] for m in items)

    events = parse((await turn_api.client.get(f"/v1/conversations/{conv['id']}/events", params={"after": 0, "turnId": result["turnId"]},
                                              headers={**ALICE, "accept": "text/event-stream"})).text)  # fmt: skip
    names = [e["event"] for e in events]
    assert "turn.cancelled" in names and "turn.completed" not in names, names
    discarded = [e["data"] for e in events if e["event"] == "message.discarded"]
    assert any(d.get("problems") == ["cancelled"] for d in discarded), discarded

    # The conversation goes on: the next message is accepted and answered.
    world.handlers["actor"] = lambda req: f"好的，我们聊聊。（{speaker(req)}）"
    nxt = await post_turn(turn_api, conv["id"], "莉娅，谢谢你")
    assert nxt.status_code == 201 and nxt.json()["status"] == "completed", nxt.text


async def test_stop_on_another_replica_ends_the_turn(turn_replicas: list[Api], world: World, engine):
    _, result, took = await _stop_mid_turn(turn_replicas[0], turn_replicas[1], world, engine)
    assert result["status"] == "cancelled", result
    assert took < 2.0, took  # the other replica sees the request at its next poll


async def test_stopping_an_ended_or_unknown_turn_is_refused(turn_api: Api):
    conv, _ = await make_group(turn_api)
    done = (await post_turn(turn_api, conv["id"], BOTH)).json()
    resp = await _cancel(turn_api, conv["id"], done["turnId"])
    assert resp.status_code == 409 and resp.json()["code"] == "turn_not_running", resp.text
    assert resp.json()["details"] == {"turnId": done["turnId"], "status": "completed"}
    assert (await _cancel(turn_api, conv["id"], "nope")).status_code == 404
    assert (await _cancel(turn_api, conv["id"], done["turnId"], headers=BOB)).status_code == 404
