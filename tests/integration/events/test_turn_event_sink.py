"""The sink: durable events at once with their id, deltas coalesced per draft, emit order kept."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from app.db.models import ConversationEvent
from app.events import EventHub, TurnEventSink


async def _rows(hub: EventHub, conversation_id: str) -> list[tuple[int, str, dict]]:
    async with hub.sessions() as s:
        rows = await s.execute(select(ConversationEvent.id, ConversationEvent.event, ConversationEvent.data)
                               .where(ConversationEvent.conversation_id == conversation_id).order_by(ConversationEvent.id))  # fmt: skip
        return [tuple(r) for r in rows]


def _delta(text: str, offset: int, draft: str = "d1", agent: str = "a1") -> dict:
    return {"turnId": "t1", "draftId": draft, "agentId": agent, "delta": text, "offset": offset}


async def test_durable_events_are_written_at_once_and_return_their_id(hub: EventHub, conversation_id: str) -> None:
    sink = TurnEventSink(hub, conversation_id, "t1")
    first = await sink.emit("turn.started", {"turnId": "t1"})
    second = await sink.emit("turn.emotion", {"turnId": "t1"})
    assert isinstance(first, int) and second == first + 1
    assert [(i, e) for i, e, _ in await _rows(hub, conversation_id)] == [(first, "turn.started"), (second, "turn.emotion")]
    await sink.close()


async def test_deltas_are_joined_into_one_row_written_before_the_next_durable_event(hub: EventHub, conversation_id: str) -> None:
    sink = TurnEventSink(hub, conversation_id, "t1", flush_every_s=60)
    assert await sink.emit("message.delta", _delta("我在", 0)) is None
    assert await sink.emit("message.delta", _delta("这里", 2)) is None
    assert await sink.emit("message.delta", _delta("陪你", 4)) is None
    assert await _rows(hub, conversation_id) == []  # nothing written per delta
    created = await sink.emit("message.created", {"turnId": "t1", "draftId": "d1"})
    rows = await _rows(hub, conversation_id)
    assert [(e, d.get("delta"), d.get("offset")) for _, e, d in rows] == [("message.delta", "我在这里陪你", 0),
                                                                         ("message.created", None, None)]
    assert rows[0][2] == {**_delta("我在这里陪你", 0)} and rows[1][0] == created
    await sink.close()


async def test_deltas_are_flushed_after_the_interval_without_a_durable_event(hub: EventHub, conversation_id: str) -> None:
    sink = TurnEventSink(hub, conversation_id, "t1", flush_every_s=0.05)
    await sink.emit("message.delta", _delta("你好", 0))
    await sink.emit("message.delta", _delta("呀", 2))
    await asyncio.sleep(0.4)
    assert [(e, d["delta"]) for _, e, d in await _rows(hub, conversation_id)] == [("message.delta", "你好呀")]
    await sink.emit("message.delta", _delta("！", 3))
    await sink.close()  # close flushes what is pending
    assert [(d["delta"], d["offset"]) for _, _, d in await _rows(hub, conversation_id)] == [("你好呀", 0), ("！", 3)]


async def test_two_drafts_are_coalesced_apart(hub: EventHub, conversation_id: str) -> None:
    sink = TurnEventSink(hub, conversation_id, "t1", flush_every_s=60)
    for text, offset, draft in [("A1", 0, "a"), ("B1", 0, "b"), ("A2", 2, "a"), ("B2", 2, "b")]:
        await sink.emit("message.delta", _delta(text, offset, draft, agent=draft))
    await sink.emit("message.created", {"draftId": "a"})
    rows = await _rows(hub, conversation_id)
    assert [(d.get("draftId"), d.get("agentId"), d.get("delta")) for _, _, d in rows] == [
        ("a", "a", "A1A2"), ("b", "b", "B1B2"), ("a", None, None)]  # fmt: skip
    await sink.close()


async def test_a_restarted_draft_starts_a_new_row(hub: EventHub, conversation_id: str) -> None:
    sink = TurnEventSink(hub, conversation_id, "t1", flush_every_s=60)
    await sink.emit("message.delta", _delta("错的", 0))
    await sink.emit("message.delta", _delta("对的", 0))
    await sink.close()
    assert [(d["delta"], d["offset"]) for _, _, d in await _rows(hub, conversation_id)] == [("错的", 0), ("对的", 0)]


async def test_concurrent_emits_are_logged_in_emit_order(hub: EventHub, conversation_id: str) -> None:
    sink = TurnEventSink(hub, conversation_id, "t1", flush_every_s=0.001)

    async def agent(name: str) -> None:
        for i in range(5):
            await sink.emit("message.delta", _delta(f"{name}{i}", i * 2, draft=name))
            await asyncio.sleep(0)
        await sink.emit("message.created", {"draftId": name})

    await asyncio.gather(agent("x"), agent("y"), agent("z"))
    await sink.close()
    rows = await _rows(hub, conversation_id)
    ids = [i for i, _, _ in rows]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    for draft in "xyz":
        mine = [(e, d) for _, e, d in rows if d.get("draftId") == draft]
        assert mine[-1][0] == "message.created"  # every delta of the draft is logged before it
        assert "".join(d["delta"] for e, d in mine if e == "message.delta") == "".join(f"{draft}{i}" for i in range(5))


async def test_live_followers_in_this_process_get_every_delta_at_once(hub: EventHub, conversation_id: str) -> None:
    sub = hub.subscribe(conversation_id)
    sink = TurnEventSink(hub, conversation_id, "t1", flush_every_s=60)
    await sink.emit("message.delta", _delta("一", 0))
    await sink.emit("message.delta", {"turnId": "t1", "draftId": "d1", "agentId": "a1", "delta": "二"})  # no offset
    assert [await sub.next(1) for _ in range(2)] == [("live", ("message.delta", _delta("一", 0))),
                                                     ("live", ("message.delta", _delta("二", 1)))]
    await sink.close()
    hub.unsubscribe(sub)


async def test_a_failing_log_write_does_not_break_the_turn(hub: EventHub, conversation_id: str, monkeypatch) -> None:
    async def broken(*_a, **_k):
        raise RuntimeError("database down")

    monkeypatch.setattr(hub, "append", broken)
    sink = TurnEventSink(hub, conversation_id, "t1")
    assert await sink.emit("turn.started", {}) is None
    await sink.close()


async def test_events_nobody_waits_for_linger_and_are_written_together(hub: EventHub, conversation_id: str,
                                                                        monkeypatch) -> None:  # fmt: skip
    writes: list[int] = []
    append = hub.append

    async def counted(conversation_id: str, turn_id: str | None, events: list) -> list[int]:
        writes.append(len(events))
        return await append(conversation_id, turn_id, events)

    monkeypatch.setattr(hub, "append", counted)
    sink = TurnEventSink(hub, conversation_id, "t1", flush_every_s=60, linger_s=0.05)
    await sink.emit_nowait("turn.started", {"turnId": "t1"})
    await sink.emit("message.delta", _delta("你好", 0))
    await sink.emit_nowait("message.created", {"turnId": "t1", "draftId": "d1"})
    assert writes == [] and await _rows(hub, conversation_id) == []  # lingering
    await asyncio.sleep(0.3)  # written within linger_s, in emit order, in one transaction
    assert writes == [3]
    assert [e for _, e, _ in await _rows(hub, conversation_id)] == ["turn.started", "message.delta", "message.created"]
    await sink.emit_nowait("turn.completed", {"turnId": "t1"})
    await sink.close()  # close writes what still lingers
    assert writes == [3, 1] and [e for _, e, _ in await _rows(hub, conversation_id)][-1] == "turn.completed"


async def test_an_awaited_event_takes_the_lingering_ones_with_it(hub: EventHub, conversation_id: str) -> None:
    sink = TurnEventSink(hub, conversation_id, "t1", linger_s=60)
    await sink.emit_nowait("turn.started", {"turnId": "t1"})
    created = await sink.emit("message.created", {"turnId": "t1"})
    rows = await _rows(hub, conversation_id)
    assert [(i, e) for i, e, _ in rows] == [(created - 1, "turn.started"), (created, "message.created")]
    await sink.close()


async def test_a_large_burst_keeps_its_order_and_gets_growing_ids(hub: EventHub, conversation_id: str) -> None:
    from app.events import log as event_log

    events = [("turn.progress", {"n": n}) for n in range(250)]  # several statements on SQLite
    ids = await event_log.append(hub.sessions, conversation_id, "t1", events, postgres=hub.postgres)
    assert ids == sorted(ids) and len(set(ids)) == 250
    rows = await _rows(hub, conversation_id)
    assert [(i, d["n"]) for i, _, d in rows] == list(zip(ids, range(250)))
