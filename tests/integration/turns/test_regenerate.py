from __future__ import annotations

from tests.integration.conftest import ALICE, BOB, Api
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import World, select


async def test_regenerate_replaces_an_agent_message_with_the_plain_actor(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    body = (await post_turn(turn_api, conv["id"], "我今天好难过")).json()
    msg = body["agentMessages"][0]
    world.handlers["actor"] = lambda req: "换个说法：我一直都在。" if "我今天好难过" in req.messages[1].content else "?"
    calls_before = len(world.calls)
    resp = await turn_api.client.post(f"/v1/conversations/{conv['id']}/messages/{msg['id']}/regenerate", headers=ALICE)
    assert resp.status_code == 200, resp.text
    new = resp.json()
    assert new["id"] == msg["id"] and new["seq"] == msg["seq"]
    assert new["content"] == "换个说法：我一直都在。" and new["contentHash"] != msg["contentHash"]
    assert new["editedAt"] is not None and new["metadata"]["regenerations"][0]["previousContentHash"] == msg["contentHash"]
    assert world.calls[calls_before:] == ["actor"]  # no selection, no story, no suggestions


async def test_regenerate_rejects_user_messages_and_other_users(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    body = (await post_turn(turn_api, conv["id"], "我今天好难过")).json()
    url = f"/v1/conversations/{conv['id']}/messages"
    user_resp = await turn_api.client.post(f"{url}/{body['userMessage']['id']}/regenerate", headers=ALICE)
    assert user_resp.status_code == 422 and user_resp.json()["code"] == "not_an_agent_message"
    other = await turn_api.client.post(f"{url}/{body['agentMessages'][0]['id']}/regenerate", headers=BOB)
    assert other.status_code == 404
    missing = await turn_api.client.post(f"{url}/nope/regenerate", headers=ALICE)
    assert missing.status_code == 404 and missing.json()["code"] == "message_not_found"
