"""``POST …/continue``: a character carries on without a new user message (issue 14, item 1),
through the same turn machinery; on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from tests.integration.conftest import ALICE, BOB, Api
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import World, select


async def _continue(api: Api, conv_id: str, **body: Any) -> Any:
    return await api.client.post(f"/v1/conversations/{conv_id}/continue", json=body, headers=ALICE)


async def test_continue_by_a_named_agent_adds_one_reply_and_no_user_message(turn_api: Api, world: World) -> None:
    conv, (gentle, planner, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    await post_turn(turn_api, conv["id"], "我今天好难过")
    before = len(world.calls)
    resp = await _continue(turn_api, conv["id"], agentId=planner["id"])
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert body["status"] == "completed" and body["userMessage"] is None
    [message] = body["agentMessages"]
    assert message["agentId"] == planner["id"] and message["replyKind"] == "primary"
    assert "actor" in world.calls[before:] and "select" not in world.calls[before:]
    page = (await turn_api.client.get(f"/v1/conversations/{conv['id']}/messages?order=asc", headers=ALICE)).json()
    roles = [m["role"] for m in page["items"]]
    assert roles.count("user") == 1 and roles[-1] == "agent"


async def test_continue_without_an_agent_takes_the_scorers_pick_and_never_calls_the_selector(
    turn_api: Api, world: World
) -> None:
    conv, _ = await make_group(turn_api)
    await post_turn(turn_api, conv["id"], "我今天好难过")
    before = len(world.calls)
    body = (await _continue(turn_api, conv["id"])).json()
    assert body["status"] == "completed" and len(body["agentMessages"]) == 1
    assert not {"select", "intent", "emotion", "cross_reply.plan"} & set(world.calls[before:])
    assert body["agentMessages"][0]["metadata"]["selectedBy"] == "fallback"


async def test_continue_streams_like_a_turn(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    await post_turn(turn_api, conv["id"], "我今天好难过")
    resp = await turn_api.client.post(f"/v1/conversations/{conv['id']}/continue", json={"agentId": gentle["id"]},
                                      headers={**ALICE, "accept": "text/event-stream"})  # fmt: skip
    names = [line.split(":", 1)[1].strip() for line in resp.text.splitlines() if line.startswith("event:")]
    assert names[0] == "turn.started" and "message.delta" in names and "message.created" in names
    assert names.index("turn.completed") > names.index("message.created")


async def test_continue_rejects_what_cannot_be_continued(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    empty = await _continue(turn_api, conv["id"])
    assert empty.status_code == 422 and empty.json()["code"] == "nothing_to_continue"
    await post_turn(turn_api, conv["id"], "我今天好难过")
    stranger = await turn_api.agent("路人")
    bad = await _continue(turn_api, conv["id"], agentId=stranger["id"])
    assert bad.status_code == 422 and bad.json()["code"] == "agent_not_member"
    other = await turn_api.client.post(f"/v1/conversations/{conv['id']}/continue", json={}, headers=BOB)
    assert other.status_code == 404
    unknown = await _continue(turn_api, conv["id"], agentid=gentle["id"])
    assert unknown.status_code in (400, 422)


async def test_continue_is_idempotent_by_key(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    await post_turn(turn_api, conv["id"], "我今天好难过")
    first = await _continue(turn_api, conv["id"], agentId=gentle["id"], idempotencyKey="c-1")
    again = await _continue(turn_api, conv["id"], agentId=gentle["id"], idempotencyKey="c-1")
    assert first.status_code == 201 and again.status_code == 200
    assert again.json()["turnId"] == first.json()["turnId"]
    clash = await post_turn(turn_api, conv["id"], "别的话", idempotencyKey="c-1")
    assert clash.status_code == 422 and clash.json()["code"] == "idempotency_key_reused"
