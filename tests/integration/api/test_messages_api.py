from __future__ import annotations

import asyncio

from sqlalchemy import select

from app.db.engine import session_factory
from app.db.models import Conversation, Message
from app.messages.store import content_hash, insert_message
from tests.integration.conftest import ALICE, Api


async def _conv(api: Api) -> str:
    a, b = await api.agent("A"), await api.agent("B")
    return (await api.group(a["id"], b["id"]))["id"]


async def test_messages_page_newest_first_with_cursor(api: Api) -> None:
    cid = await _conv(api)
    for i in range(5):
        resp = await api.client.post(f"/v1/conversations/{cid}/messages", json={"content": f"m{i}"}, headers=ALICE)
        assert resp.status_code == 201, resp.text
    page = (await api.client.get(f"/v1/conversations/{cid}/messages?limit=2", headers=ALICE)).json()
    assert [m["seq"] for m in page["items"]] == [5, 4] and page["nextCursor"] == 4
    page2 = (await api.client.get(f"/v1/conversations/{cid}/messages?limit=2&before=4", headers=ALICE)).json()
    assert [m["seq"] for m in page2["items"]] == [3, 2]
    asc = (await api.client.get(f"/v1/conversations/{cid}/messages?order=asc&after=3", headers=ALICE)).json()
    assert [m["content"] for m in asc["items"]] == ["m3", "m4"] and asc["nextCursor"] is None
    conv = (await api.client.get(f"/v1/conversations/{cid}", headers=ALICE)).json()
    assert conv["messageCount"] == 5 and conv["lastMessageAtMs"] > 0


async def test_message_edit_updates_hash_and_delete_is_soft(api: Api) -> None:
    cid = await _conv(api)
    msg = (await api.client.post(f"/v1/conversations/{cid}/messages", json={"content": "old"}, headers=ALICE)).json()
    assert msg["contentHash"] == content_hash("old")
    url = f"/v1/conversations/{cid}/messages/{msg['id']}"
    edited = (await api.client.patch(url, json={"content": "new"}, headers=ALICE)).json()
    assert edited["contentHash"] == content_hash("new") and edited["editedAt"] is not None
    assert (await api.client.delete(url, headers=ALICE)).status_code == 204
    assert (await api.client.patch(url, json={"content": "x"}, headers=ALICE)).status_code == 404
    listed = (await api.client.get(f"/v1/conversations/{cid}/messages", headers=ALICE)).json()
    assert listed["items"] == []
    conv = (await api.client.get(f"/v1/conversations/{cid}", headers=ALICE)).json()
    assert conv["messageCount"] == 0


async def test_message_limits(api: Api) -> None:
    cid = await _conv(api)
    url = f"/v1/conversations/{cid}/messages"
    too_long = await api.client.post(url, json={"content": "x" * 4001}, headers=ALICE)
    assert too_long.status_code == 413 and too_long.json()["code"] == "content_too_long"
    empty = await api.client.post(url, json={"content": "  "}, headers=ALICE)
    assert empty.status_code == 422
    huge = await api.client.post(url, content=b'{"content": "' + b"x" * 70_000 + b'"}', headers={**ALICE, "content-type": "application/json"})
    assert huge.status_code == 413
    bad_limit = await api.client.get(f"{url}?limit=1000", headers=ALICE)
    assert bad_limit.status_code == 422
    bad_cursor = await api.client.get(f"{url}?order=asc&before=3", headers=ALICE)
    assert bad_cursor.status_code == 422


async def test_concurrent_inserts_have_gap_free_seq_and_exact_count(api: Api, engine) -> None:
    cid = await _conv(api)
    sessions = session_factory(engine)  # the test loop's own engine: the app runs on another loop

    async def one(i: int) -> None:
        async with sessions() as session:
            await insert_message(session, cid, role="user", content=f"c{i}")
            await session.commit()

    await asyncio.gather(*(one(i) for i in range(20)))
    async with sessions() as session:
        seqs = sorted(await session.scalars(select(Message.seq).where(Message.conversation_id == cid)))
        conv = await session.get(Conversation, cid)
    assert seqs == list(range(1, 21))
    assert conv.message_count == 20 and conv.last_seq == 20


async def test_concurrent_http_posts_keep_seq_and_count(replicas: list[Api]) -> None:
    cid = await _conv(replicas[0])
    url = f"/v1/conversations/{cid}/messages"
    results = await asyncio.gather(*(replicas[i % 2].client.post(url, json={"content": f"p{i}"}, headers=ALICE)
                                     for i in range(20)))  # fmt: skip
    assert all(r.status_code == 201 for r in results)
    assert sorted(r.json()["seq"] for r in results) == list(range(1, 21))
    conv = (await replicas[1].client.get(f"/v1/conversations/{cid}", headers=ALICE)).json()
    assert conv["messageCount"] == 20
