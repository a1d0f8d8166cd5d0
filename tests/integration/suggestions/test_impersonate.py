"""POST /v1/conversations/{id}/impersonate ("write for me"): JSON and SSE, never stored."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from app.db.models import ConversationEvent, Message, Suggestion
from app.main import create_app
from tests.integration.conftest import ALICE, BOB, Api
from tests.integration.events.sse import parse
from tests.integration.suggestions.conftest import count, seed
from tests.integration.turns.conftest import make_group
from tests.integration.turns.fakes import World

PURPOSE = "auto_reply.impersonate"
SSE = {**ALICE, "accept": "text/event-stream"}


@pytest.fixture
def lines() -> list[Any]:
    return ["好呀，那我们周末一起去看海吧"]


@pytest.fixture
def iworld(lines: list[Any]) -> World:
    return World(**{PURPOSE: lines})


@pytest.fixture
async def iapi(settings, iworld: World) -> AsyncIterator[Api]:
    async with AsyncTestClient(create_app(settings, model=iworld.model), timeout=30) as client:
        yield Api(client, settings)


def url(conv_id: str) -> str:
    return f"/v1/conversations/{conv_id}/impersonate"


def prompts(world: World) -> list[str]:
    return [r for r in world.calls if r == PURPOSE]


async def test_a_line_in_the_users_voice_from_the_saved_window_and_nothing_is_stored(iapi: Api, iworld: World, engine) -> None:
    seen: list[Any] = []
    iworld.handlers[PURPOSE] = lambda req: seen.append(req) or "好呀，那我们周末一起去看海吧"
    conv, (gentle, planner, _) = await make_group(iapi)
    ids = await seed(engine, conv["id"], (None, "这周好累"), (gentle["id"], "辛苦啦，周末想做点什么？"),
                     (planner["id"], "这句会被删掉"))  # fmt: skip
    assert (await iapi.client.delete(f"/v1/conversations/{conv['id']}/messages/{ids[2]}", headers=ALICE)).status_code == 204
    before = (await count(engine, Message, conversation_id=conv["id"]), await count(engine, ConversationEvent, conversation_id=conv["id"]))

    resp = await iapi.client.post(url(conv["id"]), json={}, headers=ALICE)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["text"] == "好呀，那我们周末一起去看海吧" and body["draft"] == "" and body["attempts"] == [[]]
    assert body["usage"]["totalTokens"] > 0 and body["model"]
    prompt = "\n".join(m.content for m in seen[0].messages)
    assert "这周好累" in prompt and "辛苦啦，周末想做点什么？" in prompt and "这句会被删掉" not in prompt
    assert "莉娅" in seen[0].messages[0].content and seen[0].purpose == PURPOSE
    after = (await count(engine, Message, conversation_id=conv["id"]), await count(engine, ConversationEvent, conversation_id=conv["id"]))
    assert after == before  # never a message, never an event on /events
    assert await count(engine, Suggestion, conversation_id=conv["id"]) == 0


async def test_a_typed_draft_is_continued_and_kept_verbatim(iapi: Api, iworld: World, engine) -> None:
    iworld.handlers[PURPOSE] = ["去海边走走，吹吹风"]
    conv, (gentle, _, _) = await make_group(iapi)
    await seed(engine, conv["id"], (None, "这周好累"), (gentle["id"], "周末想做点什么？"))
    resp = await iapi.client.post(url(conv["id"]), json={"draft": "我想"}, headers=ALICE)
    assert resp.status_code == 200, resp.text
    assert resp.json()["text"] == "我想去海边走走，吹吹风" and resp.json()["draft"] == "我想"


async def test_sse_streams_each_attempt_and_a_rejected_one_is_discarded(iapi: Api, iworld: World, engine) -> None:
    iworld.handlers[PURPOSE] = ["这周好累", "周末想睡个懒觉，然后去吃火锅"]  # the first echoes the user
    conv, (gentle, _, _) = await make_group(iapi)
    await seed(engine, conv["id"], (None, "这周好累"), (gentle["id"], "周末想做点什么？"))
    resp = await iapi.client.post(url(conv["id"]), json={}, headers=SSE)
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream"), resp.text
    events = parse(resp.text)
    names = [e["event"] for e in events]
    assert names[0] == "impersonate.started" and names[-1] == "impersonate.done"
    assert names.index("impersonate.discarded") < [i for i, n in enumerate(names) if n == "impersonate.started"][1]
    discarded = next(e["data"] for e in events if e["event"] == "impersonate.discarded")
    assert discarded == {"attempt": 1, "problems": ["copies one of the user's earlier messages (write something new)"]}
    second = "".join(e["data"]["text"] for e in events if e["event"] == "impersonate.delta" and e["data"]["attempt"] == 2)
    assert second == events[-1]["data"]["text"] == "周末想睡个懒觉，然后去吃火锅"
    assert events[-1]["data"]["attempts"] == [discarded["problems"], []]


async def test_no_usable_line_is_an_honest_502_or_failed_event(iapi: Api, iworld: World, engine) -> None:
    iworld.handlers[PURPOSE] = ["莉娅: 我陪你"]  # always a line for a member
    conv, (gentle, _, _) = await make_group(iapi)
    await seed(engine, conv["id"], (None, "这周好累"), (gentle["id"], "周末想做点什么？"))
    resp = await iapi.client.post(url(conv["id"]), json={}, headers=ALICE)
    assert resp.status_code == 502 and resp.json()["code"] == "impersonate_failed", resp.text
    attempts = resp.json()["details"]["attempts"]
    assert len(attempts) == 3 and all(any('spoken by "莉娅"' in p for p in a) for a in attempts)
    events = parse((await iapi.client.post(url(conv["id"]), json={}, headers=SSE)).text)
    assert events[-1]["event"] == "impersonate.failed" and events[-1]["data"]["code"] == "impersonate_failed"
    assert "impersonate.done" not in [e["event"] for e in events]


async def test_request_errors_have_their_codes(iapi: Api, engine) -> None:
    conv, (gentle, _, _) = await make_group(iapi, autoReply={"enabled": False})
    other, _ = await make_group(iapi)

    async def code(conv_id: str, body: Any, headers: dict[str, str] = ALICE) -> tuple[int, str]:
        resp = await iapi.client.post(url(conv_id), json=body, headers=headers)
        return resp.status_code, resp.json()["code"]

    assert await code(conv["id"], {}) == (409, "auto_reply_disabled")
    assert await code(other["id"], {"draft": "长" * 161}) == (422, "draft_too_long")
    assert (await code(other["id"], {"draft": 3}))[0] == 422
    assert (await code(other["id"], {"unknown": 1}))[0] == 422
    assert await code(other["id"], {}, BOB) == (404, "conversation_not_found")
