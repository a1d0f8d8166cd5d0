"""Issue 11 items 6-8: the running-turn lease, one view of a turn, idempotency keys with content."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlalchemy import event, update

from app.db import fence
from app.db.engine import session_factory
from app.db.models import Turn, utcnow
from app.messages.store import insert_message
from app.turns import repository
from tests.integration.conftest import ALICE, Api
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import World, select


async def _expire_lease(engine, turn_id: str) -> None:
    async with session_factory(engine)() as s:
        await s.execute(update(Turn).where(Turn.id == turn_id).values(lease_expires_at=utcnow() - timedelta(seconds=1)))
        await s.commit()


async def test_same_key_with_other_content_is_422_idempotency_key_reused(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    first = await post_turn(turn_api, conv["id"], "我今天好难过", idempotencyKey="k1")
    same = await post_turn(turn_api, conv["id"], "我今天好难过", idempotencyKey="k1")
    other = await post_turn(turn_api, conv["id"], "完全不同的话", idempotencyKey="k1")
    assert first.status_code == 201 and same.status_code == 200
    assert same.json()["turnId"] == first.json()["turnId"]
    assert other.status_code == 422 and other.json()["code"] == "idempotency_key_reused"
    assert other.json()["details"]["turnId"] == first.json()["turnId"]
    page = (await turn_api.client.get(f"/v1/conversations/{conv['id']}/messages", headers=ALICE)).json()
    assert [m["content"] for m in page["items"] if m["role"] == "user"] == ["我今天好难过"]


async def test_a_turn_whose_lease_lapsed_is_taken_over_by_the_next_turn(turn_api: Api, world: World, engine) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    sessions = session_factory(engine)  # a "server process" that started a turn and then died
    crashed = await repository.start_turn(sessions, "alice", conv["id"], "我今天好难过", None, stale_after_s=3600)
    busy = await post_turn(turn_api, conv["id"], "还有一件事")
    assert busy.status_code == 409 and busy.json()["code"] == "turn_in_progress"
    assert 1 <= int(busy.headers["retry-after"]) <= repository.LEASE_S  # the lease's real remaining time
    await _expire_lease(engine, crashed.turn.id)  # no heartbeat came: the lease lapses
    taken = await post_turn(turn_api, conv["id"], "还有一件事")
    assert taken.status_code == 201, taken.text
    async with sessions() as s:
        old = await s.get(Turn, crashed.turn.id)
    assert old.status == "failed" and old.error["code"] == "turn_abandoned" and old.running_lock is None


async def test_the_heartbeat_renews_the_lease_until_the_turn_finishes(turn_api: Api, engine) -> None:
    conv, _ = await make_group(turn_api)
    sessions = session_factory(engine)
    started = await repository.start_turn(sessions, "alice", conv["id"], "你好", None, stale_after_s=3600)
    await _expire_lease(engine, started.turn.id)
    async with repository.lease_heartbeat(sessions, started.turn.id, every_s=0.05):
        await asyncio.sleep(0.3)
        async with sessions() as s:
            lease = (await s.get(Turn, started.turn.id)).lease_expires_at
        assert lease > utcnow() + timedelta(seconds=repository.LEASE_S - 2)
        busy = await post_turn(turn_api, conv["id"], "还有一件事")
        assert busy.status_code == 409  # a live turn is never taken over
    await repository.finish_turn(sessions, started.turn.id, status="completed", result=None, error=None,
                                 intent=None, emotion=None, timings={}, usage={})  # fmt: skip
    assert await repository.renew_lease(sessions, started.turn.id) is False


async def test_a_fenced_turns_heartbeat_is_one_update_a_beat(turn_api: Api, engine) -> None:
    conv, _ = await make_group(turn_api)
    sessions = session_factory(engine)
    started = await repository.start_turn(sessions, "alice", conv["id"], "你好", None, stale_after_s=3600)
    updates: list[str] = []

    def count(_conn, _cursor, statement: str, *_args) -> None:
        if statement.lstrip().upper().startswith("UPDATE TURNS"):
            updates.append(statement)

    event.listen(engine.sync_engine, "before_cursor_execute", count)
    try:
        with fence.fenced(started.turn.id):  # as in a turn: the heartbeat task inherits the fence
            async with repository.lease_heartbeat(sessions, started.turn.id, every_s=0.05):
                await asyncio.sleep(0.28)
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", count)
    beats = len(updates)
    assert 3 <= beats <= 6, updates  # one renewal a beat; fenced, each beat would be two statements
    assert await repository.renew_lease(sessions, started.turn.id) is True


async def test_replaying_a_crashed_turns_key_shows_the_reply_that_was_saved(turn_api: Api, engine) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    sessions = session_factory(engine)
    crashed = await repository.start_turn(sessions, "alice", conv["id"], "我今天好难过", "k-crash", stale_after_s=3600)
    async with sessions() as s:
        await insert_message(s, conv["id"], role="agent", content="抱抱你", agent_id=gentle["id"],
                             turn_id=crashed.turn.id, reply_kind="primary")  # fmt: skip
        await s.commit()
    await _expire_lease(engine, crashed.turn.id)
    replay = await post_turn(turn_api, conv["id"], "我今天好难过", idempotencyKey="k-crash")
    assert replay.status_code == 200, replay.text
    read = await turn_api.client.get(f"/v1/conversations/{conv['id']}/turns/{crashed.turn.id}", headers=ALICE)
    assert replay.json() == read.json()
    body = replay.json()
    assert body["status"] == "failed" and body["error"]["code"] == "turn_abandoned"
    assert [m["content"] for m in body["agentMessages"]] == ["抱抱你"]


async def test_replaying_a_running_turns_key_is_409_with_the_lease_wait(turn_api: Api, engine) -> None:
    conv, _ = await make_group(turn_api)
    sessions = session_factory(engine)
    await repository.start_turn(sessions, "alice", conv["id"], "你好", "k-run", stale_after_s=3600)
    again = await post_turn(turn_api, conv["id"], "你好", idempotencyKey="k-run")
    assert again.status_code == 409 and 1 <= int(again.headers["retry-after"]) <= repository.LEASE_S
