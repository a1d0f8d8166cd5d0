"""A turn's SSE response: durable events in emit order with their log ids; a delta does not wait
behind a durable event still being written, except before the first event went out."""

from __future__ import annotations

import asyncio
from typing import Any

from app.events.outbox import Outbox


def _written(loop: asyncio.AbstractEventLoop, event_id: int | None = None) -> asyncio.Future[int | None]:
    done: asyncio.Future[int | None] = loop.create_future()
    done.set_result(event_id)
    return done


async def _take(outbox: Outbox, n: int, into: list[Any]) -> None:
    async for item in outbox.drain():
        into.append(item[0] if item[2] is None else (item[0], item[2]))
        if len(into) == n:
            return


async def test_a_delta_passes_a_durable_event_still_being_written() -> None:
    loop = asyncio.get_running_loop()
    outbox, seen = Outbox(), []
    outbox.put("turn.started", {}, _written(loop, 1))
    writing: asyncio.Future[int | None] = loop.create_future()
    outbox.put("turn.emotion", {}, writing)
    outbox.put("message.delta", {"delta": "你"}, _written(loop))
    outbox.put("message.delta", {"delta": "好"}, _written(loop))
    reader = asyncio.create_task(_take(outbox, 4, seen))
    await asyncio.sleep(0.01)
    assert seen == [("turn.started", 1), "message.delta", "message.delta"]  # the write is still on
    writing.set_result(2)
    await asyncio.wait_for(reader, 1)
    assert seen[-1] == ("turn.emotion", 2)


async def test_durable_events_keep_their_order_and_nothing_passes_the_first_event() -> None:
    loop = asyncio.get_running_loop()
    outbox, seen = Outbox(), []
    started: asyncio.Future[int | None] = loop.create_future()
    second: asyncio.Future[int | None] = loop.create_future()
    outbox.put("turn.started", {}, started)
    outbox.put("message.delta", {}, _written(loop))
    outbox.put("turn.selection", {}, second)
    outbox.put("message.created", {}, _written(loop, 3))
    outbox.end()
    reader = asyncio.create_task(_take(outbox, 4, seen))
    await asyncio.sleep(0.01)
    assert seen == []  # the first event is not out yet: the delta waits for it
    second.set_result(2)
    await asyncio.sleep(0.01)
    assert seen == []  # a later write finished first: still in emit order
    started.set_result(1)
    await asyncio.wait_for(reader, 1)
    assert seen == [("turn.started", 1), "message.delta", ("turn.selection", 2), ("message.created", 3)]


async def test_drain_ends_after_the_last_event() -> None:
    loop = asyncio.get_running_loop()
    outbox = Outbox()
    outbox.put("turn.started", {}, _written(loop, 1))

    async def later() -> None:
        await asyncio.sleep(0.01)
        outbox.put("turn.completed", {}, _written(loop, 2))
        outbox.end()

    asyncio.get_running_loop().create_task(later())
    got = [(e, i) async for e, _, i in outbox.drain()]
    assert got == [("turn.started", 1), ("turn.completed", 2)]
