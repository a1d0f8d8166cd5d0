"""Following a conversation: replay after an id, then live; deltas sent once, in order."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.engine import create_engine, session_factory
from app.events import EventHub, TurnEventSink
from app.events.follow import follow


def _delta(text_: str, offset: int, draft: str = "d1") -> dict[str, Any]:
    return {"turnId": "t1", "draftId": draft, "agentId": "a1", "delta": text_, "offset": offset}


class Collector:
    """Runs ``follow`` in a task and keeps what it yields."""

    def __init__(self, stream: Any) -> None:
        self.items: list[dict[str, Any]] = []
        self.task = asyncio.ensure_future(self._run(stream))

    async def _run(self, stream: Any) -> None:
        async for item in stream:
            self.items.append(item)

    def events(self) -> list[tuple[str, Any]]:
        return [(i["event"], json.loads(i["data"])) for i in self.items if i.get("event")]

    def text(self, draft: str = "d1") -> str:
        return "".join(d["delta"] for e, d in self.events() if e == "message.delta" and d["draftId"] == draft)

    async def wait_for(self, predicate: Any, timeout: float = 5.0) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while not predicate(self):
            assert asyncio.get_running_loop().time() < deadline, self.items
            await asyncio.sleep(0.01)


async def _turn(sink: TurnEventSink) -> list[int | None]:
    ids = [await sink.emit("turn.started", {"turnId": "t1"})]
    for i, piece in enumerate(["我", "在", "这里"]):
        await sink.emit("message.delta", _delta(piece, [0, 1, 2][i]))
    ids.append(await sink.emit("message.created", {"turnId": "t1", "message": {"content": "我在这里"}}))
    ids.append(await sink.emit("turn.completed", {"turnId": "t1"}))
    await sink.close()
    return ids


async def test_replay_after_an_id_returns_only_what_was_missed(hub: EventHub, conversation_id: str) -> None:
    started, created, completed = await _turn(TurnEventSink(hub, conversation_id, "t1", flush_every_s=60))
    got = Collector(follow(hub, conversation_id, started, turn_id="t1"))
    await asyncio.wait_for(got.task, 5)  # the turn's terminal event ends a turnId stream
    assert [e for e, _ in got.events()] == ["message.delta", "message.created", "turn.completed"]
    assert got.text() == "我在这里"
    ids = [i["id"] for i in got.items]
    assert ids == sorted(ids) and ids[-2:] == [created, completed] and ids[0] > started


async def test_a_finished_turn_ends_a_turn_stream_at_once(hub: EventHub, conversation_id: str) -> None:
    *_, completed = await _turn(TurnEventSink(hub, conversation_id, "t1"))
    got = Collector(follow(hub, conversation_id, completed, turn_id="t1"))
    await asyncio.wait_for(got.task, 5)
    assert got.items == []


async def test_without_an_id_the_stream_starts_from_now(hub: EventHub, conversation_id: str) -> None:
    old = TurnEventSink(hub, conversation_id, "t0")
    await old.emit("turn.completed", {"turnId": "t0"})
    got = Collector(follow(hub, conversation_id, None, keepalive_s=0.05))
    await asyncio.sleep(0.1)
    sink = TurnEventSink(hub, conversation_id, "t1")
    new = await sink.emit("turn.started", {"turnId": "t1"})
    await got.wait_for(lambda c: c.events())
    got.task.cancel()
    assert [(i["event"], i["id"]) for i in got.items if i.get("event")] == [("turn.started", new)]
    assert any(i.get("comment") == "keep-alive" for i in got.items)


async def test_live_deltas_and_logged_rows_give_the_text_once_in_order(hub: EventHub, conversation_id: str) -> None:
    sink = TurnEventSink(hub, conversation_id, "t1", flush_every_s=0.03)
    start = await sink.emit("turn.started", {"turnId": "t1"})
    got = Collector(follow(hub, conversation_id, start, turn_id="t1"))
    words = ["今天", "的", "风", "很", "温柔", "，", "我", "陪", "你", "走", "走"]
    offset = 0
    for w in words:
        await sink.emit("message.delta", _delta(w, offset))
        offset += len(w)
        await asyncio.sleep(0.01)
    created = await sink.emit("message.created", {"turnId": "t1"})
    await sink.emit("turn.completed", {"turnId": "t1"})
    await sink.close()
    await asyncio.wait_for(got.task, 5)
    assert got.text() == "".join(words)
    names = [e for e, _ in got.events()]
    assert names[-2:] == ["message.created", "turn.completed"] and set(names[:-2]) == {"message.delta"}
    logged = [i["id"] for i in got.items if "id" in i]
    assert logged == sorted(logged) and created in logged


async def test_a_follower_in_this_process_gets_deltas_live_and_the_row_as_a_bare_id(hub: EventHub, conversation_id: str) -> None:
    sink = TurnEventSink(hub, conversation_id, "t1", flush_every_s=60)
    start = await sink.emit("turn.started", {"turnId": "t1"})
    got = Collector(follow(hub, conversation_id, start, turn_id="t1"))
    await asyncio.sleep(0.05)
    for piece, offset in [("慢慢", 0), ("来", 2)]:
        await sink.emit("message.delta", _delta(piece, offset))
    await got.wait_for(lambda c: c.text() == "慢慢来")
    assert all("id" not in i for i in got.items)  # not logged yet, already seen
    await sink.emit("turn.completed", {"turnId": "t1"})
    await sink.close()
    await asyncio.wait_for(got.task, 5)
    assert got.text() == "慢慢来"
    assert {"id": start + 1, "data": None} in got.items  # the coalesced row: nothing new, just its id


async def test_a_reconnect_in_the_middle_of_a_draft_does_not_repeat_text(hub: EventHub, conversation_id: str) -> None:
    sink = TurnEventSink(hub, conversation_id, "t1", flush_every_s=60)
    await sink.emit("message.delta", _delta("第一段", 0))
    await sink.flush()
    first = Collector(follow(hub, conversation_id, 0, turn_id="t1"))
    await first.wait_for(lambda c: c.text() == "第一段")
    first.task.cancel()
    last_id = max(i["id"] for i in first.items if "id" in i)
    await sink.emit("message.delta", _delta("第二段", 3))
    await sink.emit("turn.completed", {"turnId": "t1"})
    await sink.close()
    again = Collector(follow(hub, conversation_id, last_id, turn_id="t1"))
    await asyncio.wait_for(again.task, 5)
    assert again.text() == "第二段" and [e for e, _ in again.events()] == ["message.delta", "turn.completed"]


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
async def test_a_hub_on_another_engine_wakes_on_notify(hub: EventHub, conversation_id: str, db_url: str) -> None:
    other_engine = create_engine(db_url)
    other = EventHub(session_factory(other_engine), db_url)  # "another server process"
    await other.start()
    try:
        assert hub.listening and other.listening
        got = Collector(follow(other, conversation_id, 0, turn_id="t1", keepalive_s=30))
        await asyncio.sleep(0.1)
        ids = await _turn(TurnEventSink(hub, conversation_id, "t1", flush_every_s=60))
        await asyncio.wait_for(got.task, 5)  # well under the 30 s keep-alive re-read: the NOTIFY woke it
        assert [i.get("id") for i in got.items if i.get("event") != "message.delta"] == ids
        assert got.text() == "我在这里"
    finally:
        await other.close()
        await other_engine.dispose()


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
async def test_the_listen_connection_comes_back_after_it_is_killed(hub: EventHub, conversation_id: str,
                                                                    engine: AsyncEngine, db_url: str) -> None:  # fmt: skip
    other_engine = create_engine(db_url)
    other = EventHub(session_factory(other_engine), db_url)
    await other.start()
    try:
        old_pid = other.listen_pid
        async with engine.connect() as conn:
            await conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": old_pid})
            await conn.commit()
        for _ in range(100):
            if other.listening and other.listen_pid != old_pid:
                break
            await asyncio.sleep(0.05)
        assert other.listening and other.listen_pid != old_pid
        got = Collector(follow(other, conversation_id, 0, turn_id="t1", keepalive_s=30))
        await asyncio.sleep(0.1)
        await _turn(TurnEventSink(hub, conversation_id, "t1"))
        await asyncio.wait_for(got.task, 5)
        assert [e for e, _ in got.events()][-1] == "turn.completed"
    finally:
        await other.close()
        await other_engine.dispose()


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
async def test_concurrent_writers_in_two_processes_never_make_a_follower_skip_an_event(
    hub: EventHub, conversation_id: str, db_url: str
) -> None:
    other_engine = create_engine(db_url)
    other = EventHub(session_factory(other_engine), db_url)
    await other.start()
    try:
        got = Collector(follow(hub, conversation_id, 0, keepalive_s=30))

        async def write(writer: EventHub, name: str) -> list[int]:
            sink = TurnEventSink(writer, conversation_id, None)
            ids = [await sink.emit("turn.emotion", {"writer": name, "i": i}) for i in range(40)]
            await sink.close()
            return ids

        written = await asyncio.gather(write(hub, "a"), write(other, "b"), write(hub, "c"), write(other, "d"))
        expected = sorted(i for ids in written for i in ids)
        await got.wait_for(lambda c: len(c.items) >= len(expected), timeout=10)
        got.task.cancel()
        assert [i["id"] for i in got.items] == expected  # ids in commit order: none read past, none missed
    finally:
        await other.close()
        await other_engine.dispose()
