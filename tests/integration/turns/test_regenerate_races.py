"""Issue 33 item 8: a regeneration holds its conversation's turn lock like a turn does.

Every test sends twenty requests at once to two app instances on one database (``turn_replicas``:
the requests really interleave). The model's actor call waits on a gate, so the request that won
the lock is still running while the others arrive: exactly one of them runs, the rest get 409
``turn_in_progress``, from either instance.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import func, select

from app.db.engine import session_factory
from app.db.models import Message, Turn
from app.messages.store import content_hash
from app.turns import repository
from tests.integration.conftest import ALICE, Api
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import World, select as select_agents


class Gate:
    """An actor handler that answers only once ``open()`` is called; counts who is waiting."""

    def __init__(self, text: str = "换个说法：我一直都在这里。") -> None:
        self.event = asyncio.Event()
        self.text = text
        self.waiting = 0
        self.served = 0

    async def __call__(self, _request: Any) -> str:
        self.waiting += 1
        await self.event.wait()
        self.served += 1
        return f"{self.text}（{self.served}）"

    def open(self) -> None:
        self.event.set()


async def _until(check: Any, timeout_s: float = 20.0) -> None:
    async with asyncio.timeout(timeout_s):
        while not check():
            await asyncio.sleep(0.01)


async def _setup(replicas: list[Api], world: World) -> tuple[dict[str, Any], dict[str, Any]]:
    conv, (gentle, _, _) = await make_group(replicas[0])
    world.handlers["select"] = select_agents(gentle["id"])
    body = (await post_turn(replicas[0], conv["id"], "我今天好难过")).json()
    assert body["status"] == "completed", body
    return conv, body["agentMessages"][0]


def _regen_url(conv: dict[str, Any], msg: dict[str, Any]) -> str:
    return f"/v1/conversations/{conv['id']}/messages/{msg['id']}/regenerate"


async def _regenerate_turn_rows(engine, conv_id: str) -> list[Turn]:
    async with session_factory(engine)() as s:
        rows = await s.scalars(select(Turn).where(Turn.conversation_id == conv_id).order_by(Turn.created_at))
        return [t for t in rows if (t.result or {}).get("kind") == "regenerate"]


async def _running(engine, conv_id: str) -> str | None:
    async with session_factory(engine)() as s:
        return await s.scalar(select(Turn.id).where(Turn.running_lock == conv_id))


def _is_busy(resp: Any) -> bool:
    return resp.status_code == 409 and resp.json()["code"] == "turn_in_progress"


async def test_twenty_concurrent_regenerates_run_one_and_its_text_is_stored(
    turn_replicas: list[Api], world: World, engine
) -> None:
    conv, msg = await _setup(turn_replicas, world)
    gate = world.handlers["actor"] = Gate()
    url = _regen_url(conv, msg)
    tasks = [asyncio.ensure_future(turn_replicas[i % 2].client.post(url, headers=ALICE)) for i in range(20)]
    await _until(lambda: gate.waiting >= 1 and sum(t.done() for t in tasks) >= 19)
    running = await _running(engine, conv["id"])
    gate.open()
    results = await asyncio.gather(*tasks)
    ok = [r for r in results if r.status_code == 200]
    busy = [r for r in results if _is_busy(r)]
    assert len(ok) == 1 and len(busy) == 19, sorted(r.status_code for r in results)
    assert {r.json()["details"]["runningTurnId"] for r in busy} == {running}
    assert all(1 <= int(r.headers["retry-after"]) <= repository.LEASE_S for r in busy)
    assert gate.waiting == 1  # one actor call: one regeneration ran
    new = ok[0].json()
    assert new["id"] == msg["id"] and new["seq"] == msg["seq"]
    page = (await turn_replicas[1].client.get(f"/v1/conversations/{conv['id']}/messages", headers=ALICE)).json()
    stored = next(m for m in page["items"] if m["id"] == msg["id"])
    assert stored["content"] == new["content"] and stored["contentHash"] == content_hash(new["content"])
    assert stored["metadata"]["regenerations"] == new["metadata"]["regenerations"]
    assert [h["previousContentHash"] for h in stored["metadata"]["regenerations"]] == [msg["contentHash"]]
    (row,) = await _regenerate_turn_rows(engine, conv["id"])  # one turn row, labelled, its lock released
    assert row.id == running and row.status == "completed" and row.running_lock is None
    assert row.result["regeneratedMessageId"] == msg["id"] and row.user_message_id is None
    assert row.result["agentMessages"][0]["content"] == new["content"]
    view = (await turn_replicas[0].client.get(f"/v1/conversations/{conv['id']}/turns/{row.id}", headers=ALICE)).json()
    assert view["kind"] == "regenerate" and view["status"] == "completed"


async def test_each_regeneration_in_turn_is_kept_in_the_history(turn_replicas: list[Api], world: World) -> None:
    """Sequential regenerations (the only kind there is now) chain their hashes in the history."""
    conv, msg = await _setup(turn_replicas, world)
    texts = iter(["换个说法：我一直都在。", "要不要出去走走，晒晒太阳？", "今晚早点睡，明天会好一些。",
                  "想哭就哭吧，我陪着你。", "我们一起想想办法。"])
    world.handlers["actor"] = lambda _req: next(texts)
    hashes = [msg["contentHash"]]
    for i in range(4):
        resp = await turn_replicas[i % 2].client.post(_regen_url(conv, msg), headers=ALICE)
        assert resp.status_code == 200, resp.text
        hashes.append(resp.json()["contentHash"])
    history = resp.json()["metadata"]["regenerations"]
    assert [h["previousContentHash"] for h in history] == hashes[:-1]


async def test_twenty_turns_posted_during_a_regenerate_get_409_and_store_nothing(
    turn_replicas: list[Api], world: World, engine
) -> None:
    conv, msg = await _setup(turn_replicas, world)
    before = (await turn_replicas[0].client.get(f"/v1/conversations/{conv['id']}", headers=ALICE)).json()["messageCount"]
    gate = world.handlers["actor"] = Gate()
    regen = asyncio.ensure_future(turn_replicas[0].client.post(_regen_url(conv, msg), headers=ALICE))
    await _until(lambda: gate.waiting == 1)
    running = await _running(engine, conv["id"])
    turns = f"/v1/conversations/{conv['id']}/turns"
    cont = f"/v1/conversations/{conv['id']}/continue"
    results = await asyncio.gather(*(
        turn_replicas[i % 2].client.post(turns if i % 4 else cont, json={"content": f"还有一件事{i}"} if i % 4 else {},
                                         headers=ALICE)
        for i in range(20)
    ))  # fmt: skip
    assert all(_is_busy(r) for r in results), [(r.status_code, r.text[:80]) for r in results]
    assert {r.json()["details"]["runningTurnId"] for r in results} == {running}
    assert (await _running(engine, conv["id"])) == running
    gate.open()
    assert (await regen).status_code == 200
    after = (await turn_replicas[1].client.get(f"/v1/conversations/{conv['id']}", headers=ALICE)).json()["messageCount"]
    assert after == before  # a refused turn stored no user message
    world.handlers["actor"] = lambda _req: "我们慢慢来。"
    resp = await post_turn(turn_replicas[1], conv["id"], "还有一件事")
    assert resp.status_code == 201, resp.text  # the lock was released


async def test_twenty_regenerates_during_a_running_turn_get_409(turn_replicas: list[Api], world: World, engine) -> None:
    conv, msg = await _setup(turn_replicas, world)
    gate = world.handlers["actor"] = Gate()
    turn = asyncio.ensure_future(post_turn(turn_replicas[0], conv["id"], "还有一件事"))
    await _until(lambda: gate.waiting >= 1)
    running, actor_calls = await _running(engine, conv["id"]), gate.waiting
    url = _regen_url(conv, msg)
    results = await asyncio.gather(*(turn_replicas[i % 2].client.post(url, headers=ALICE) for i in range(20)))
    assert all(_is_busy(r) for r in results), [(r.status_code, r.text[:80]) for r in results]
    assert {r.json()["details"]["runningTurnId"] for r in results} == {running}
    assert gate.waiting == actor_calls  # no regeneration reached the model
    gate.open()
    assert (await turn).status_code == 201
    assert await _regenerate_turn_rows(engine, conv["id"]) == []  # a refused regeneration leaves no row
    page = (await turn_replicas[1].client.get(f"/v1/conversations/{conv['id']}/messages", headers=ALICE)).json()
    assert next(m for m in page["items"] if m["id"] == msg["id"])["content"] == msg["content"]
    world.handlers["actor"] = lambda _req: "换个说法：我在。"
    assert (await turn_replicas[1].client.post(url, headers=ALICE)).status_code == 200


async def test_twenty_turns_and_regenerates_at_once_run_exactly_one(
    turn_replicas: list[Api], world: World, engine
) -> None:
    conv, msg = await _setup(turn_replicas, world)
    gate = world.handlers["actor"] = Gate()
    url, turns = _regen_url(conv, msg), f"/v1/conversations/{conv['id']}/turns"
    tasks = [
        asyncio.ensure_future(turn_replicas[i % 2].client.post(url, headers=ALICE) if i % 2
                              else turn_replicas[i % 2].client.post(turns, json={"content": f"再说{i}"}, headers=ALICE))
        for i in range(20)
    ]  # fmt: skip
    await _until(lambda: gate.waiting >= 1 and sum(t.done() for t in tasks) >= 19)
    gate.open()
    results = await asyncio.gather(*tasks)
    assert sum(r.status_code in (200, 201) for r in results) == 1, sorted(r.status_code for r in results)
    assert sum(_is_busy(r) for r in results) == 19
    async with session_factory(engine)() as s:
        assert await s.scalar(select(func.count()).where(Turn.conversation_id == conv["id"])) == 2  # the setup's + one
        assert await s.scalar(select(Turn.id).where(Turn.running_lock.is_not(None))) is None


async def test_a_failed_regenerate_releases_the_lock_and_says_so(turn_replicas: list[Api], world: World, engine) -> None:
    conv, msg = await _setup(turn_replicas, world)
    world.handlers["actor"] = RuntimeError("the model fell over")
    resp = await turn_replicas[0].client.post(_regen_url(conv, msg), headers=ALICE)
    assert resp.status_code >= 500, resp.text
    (row,) = await _regenerate_turn_rows(engine, conv["id"])
    assert row.status == "failed" and row.running_lock is None and row.error["code"]
    assert row.result["kind"] == "regenerate" and row.result["agentMessages"] == []
    world.handlers["actor"] = lambda _req: "我们慢慢来。"
    assert (await post_turn(turn_replicas[1], conv["id"], "还有一件事")).status_code == 201


async def test_a_regenerate_whose_client_goes_away_still_finishes_and_releases_the_lock(
    turn_replicas: list[Api], world: World, engine
) -> None:
    conv, msg = await _setup(turn_replicas, world)
    gate = world.handlers["actor"] = Gate()
    regen = asyncio.ensure_future(turn_replicas[0].client.post(_regen_url(conv, msg), headers=ALICE))
    await _until(lambda: gate.waiting == 1)
    regen.cancel()  # the client disconnects
    await asyncio.gather(regen, return_exceptions=True)
    assert await _running(engine, conv["id"]) is not None  # still running, still holding the lock
    gate.open()
    await _until(lambda: gate.served == 1)
    (row,) = await _regenerate_turn_rows_when_done(engine, conv["id"])
    assert row.status == "completed" and row.running_lock is None
    async with session_factory(engine)() as s:
        assert (await s.get(Message, msg["id"])).content == f"{gate.text}（1）"


async def _regenerate_turn_rows_when_done(engine, conv_id: str) -> list[Turn]:
    async with asyncio.timeout(20):
        while not (rows := await _regenerate_turn_rows(engine, conv_id)):
            await asyncio.sleep(0.02)
    return rows


async def test_a_long_regenerate_keeps_its_lease(turn_replicas: list[Api], world: World, engine) -> None:
    conv, msg = await _setup(turn_replicas, world)
    gate = world.handlers["actor"] = Gate()
    regen = asyncio.ensure_future(turn_replicas[0].client.post(_regen_url(conv, msg), headers=ALICE))
    await _until(lambda: gate.waiting == 1)
    await asyncio.sleep(repository.LEASE_S + 1.0)  # past a lease that was never renewed
    busy = await post_turn(turn_replicas[1], conv["id"], "还有一件事")
    assert _is_busy(busy), busy.text  # the heartbeat renewed it: the other replica's reaper left it alone
    gate.open()
    assert (await regen).status_code == 200
