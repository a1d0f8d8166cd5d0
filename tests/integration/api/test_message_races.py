"""Issue 33 item 8: concurrent requests on one message, sent to two app instances on one database
at once (``replicas``). A message is deleted once, and the conversation's ``messageCount`` moves
once, however many DELETEs race for it."""

from __future__ import annotations

import asyncio

from sqlalchemy import func, select

from app.db.engine import session_factory
from app.db.models import Conversation, Message
from tests.integration.conftest import ALICE, Api


async def _conv_with_messages(api: Api, n: int) -> tuple[str, list[dict]]:
    a, b = await api.agent("A"), await api.agent("B")
    cid = (await api.group(a["id"], b["id"]))["id"]
    url = f"/v1/conversations/{cid}/messages"
    posted = [(await api.client.post(url, json={"content": f"m{i}"}, headers=ALICE)).json() for i in range(n)]
    return cid, posted


async def _live_count(engine, cid: str) -> tuple[int, int]:
    async with session_factory(engine)() as s:
        live = await s.scalar(select(func.count()).where(Message.conversation_id == cid, Message.deleted_at.is_(None)))
        conv = await s.get(Conversation, cid)
    return live, conv.message_count


async def test_twenty_concurrent_deletes_of_one_message_delete_it_once(replicas: list[Api], engine) -> None:
    cid, posted = await _conv_with_messages(replicas[0], 6)
    url = f"/v1/conversations/{cid}/messages/{posted[2]['id']}"
    results = await asyncio.gather(*(replicas[i % 2].client.delete(url, headers=ALICE) for i in range(20)))
    codes = sorted(r.status_code for r in results)
    assert codes == [204] + [404] * 19, codes
    assert {r.json()["code"] for r in results if r.status_code == 404} == {"message_not_found"}
    assert await _live_count(engine, cid) == (5, 5)
    conv = (await replicas[1].client.get(f"/v1/conversations/{cid}", headers=ALICE)).json()
    assert conv["messageCount"] == 5


async def test_concurrent_deletes_of_different_messages_each_count_once(replicas: list[Api], engine) -> None:
    cid, posted = await _conv_with_messages(replicas[0], 8)
    urls = [f"/v1/conversations/{cid}/messages/{m['id']}" for m in posted[:4]] * 5  # 4 messages, 5 DELETEs each
    results = await asyncio.gather(*(replicas[i % 2].client.delete(u, headers=ALICE) for i, u in enumerate(urls)))
    assert sorted(r.status_code for r in results) == [204] * 4 + [404] * 16
    assert await _live_count(engine, cid) == (4, 4)


async def test_edits_racing_a_delete_leave_it_deleted_and_the_count_right(replicas: list[Api], engine) -> None:
    cid, posted = await _conv_with_messages(replicas[0], 2)
    url = f"/v1/conversations/{cid}/messages/{posted[0]['id']}"
    results = await asyncio.gather(replicas[0].client.delete(url, headers=ALICE),
                                   *(replicas[i % 2].client.patch(url, json={"content": f"e{i}"}, headers=ALICE)
                                     for i in range(19)))  # fmt: skip
    assert results[0].status_code == 204
    edits = [r for r in results[1:] if r.status_code == 200]
    assert all(r.status_code in (200, 404) for r in results[1:])
    async with session_factory(engine)() as s:
        row = await s.get(Message, posted[0]["id"])
    assert row.deleted_at is not None
    assert row.content in {"m0", *(r.json()["content"] for r in edits)}
    assert await _live_count(engine, cid) == (1, 1)
