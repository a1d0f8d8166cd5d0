"""Regenerate adds a version; the selected version is what every later reader sees (issue 27)."""

from __future__ import annotations

import msgspec

from tests.integration.conftest import ALICE, BOB
from tests.integration.controls.conftest import controls, logged_events
from tests.integration.story.conftest import requests, saved_state, say, story_group
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import select

FIRST, SECOND, THIRD = "我一直都在。", "换个说法：我陪着你。", "第三种说法：慢慢来。"
DISTINCT = ["天色晚了，先喝杯热茶吧。", "要不要出去走走？", "你愿意说说发生了什么吗", "别急，我们一件一件来。",
            "抱抱你，今天辛苦了！", "我记得你上次也挺过来了。", "想哭就哭出来，没关系的", "明天会好一点的，相信我。",
            "听首歌放松一下？", "我在这儿，哪儿也不去。"]


async def _regenerate(api, conv_id: str, msg_id: str, world=None, text: str | None = None):
    if world is not None:
        world.handlers["actor"] = lambda req: text
    return await api.client.post(f"/v1/conversations/{conv_id}/messages/{msg_id}/regenerate", headers=ALICE)


async def _select(api, conv_id: str, msg_id: str, version: int, user=ALICE):
    return await api.client.put(f"/v1/conversations/{conv_id}/messages/{msg_id}/selected", json={"version": version},
                                headers=user)  # fmt: skip


async def test_regenerate_keeps_every_version_and_a_swipe_brings_one_back(turn_api, world, engine) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    world.handlers["actor"] = lambda req: FIRST
    msg = (await post_turn(turn_api, conv["id"], "我今天好难过")).json()["agentMessages"][0]
    assert msg["selectedVersion"] is None
    url = f"/v1/conversations/{conv['id']}/messages/{msg['id']}"
    one = (await turn_api.client.get(f"{url}/versions", headers=ALICE)).json()
    assert one["selected"] == 1 and [v["content"] for v in one["items"]] == [FIRST]

    assert (await _regenerate(turn_api, conv["id"], msg["id"], world, SECOND)).json()["selectedVersion"] == 2
    third = (await _regenerate(turn_api, conv["id"], msg["id"], world, THIRD)).json()
    assert "content" in third, third
    assert third["content"] == THIRD and third["selectedVersion"] == 3
    listed = (await turn_api.client.get(f"{url}/versions", headers=ALICE)).json()
    assert [(v["number"], v["content"], v["reason"], v["selected"]) for v in listed["items"]] == [
        (1, FIRST, "original", False), (2, SECOND, "regenerate", False), (3, THIRD, "regenerate", True)]
    assert listed["items"][2]["model"] and listed["items"][2]["metadata"]["attempts"] >= 1

    back = await _select(turn_api, conv["id"], msg["id"], 1)
    assert back.status_code == 200, back.text
    assert back.json()["content"] == FIRST and back.json()["selectedVersion"] == 1 and back.json()["editedAt"]
    page = (await turn_api.client.get(f"/v1/conversations/{conv['id']}/messages", headers=ALICE)).json()
    assert [m["content"] for m in page["items"] if m["id"] == msg["id"]] == [FIRST]

    assert [k for k, _, _ in await controls(engine, conv["id"])] == ["regenerate", "regenerate", "select"]
    assert (await controls(engine, conv["id"]))[-1][2] == {"from": 3, "to": 1, "back": True}
    events = [(e, d.get("selected")) for e, d in await logged_events(engine, conv["id"]) if e.startswith("message.version")]
    assert events == [("message.version_added", 2), ("message.version_added", 3), ("message.version_selected", 1)]


async def test_the_next_prompt_sees_the_selected_version_only(turn_api, world) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    world.handlers["actor"] = lambda req: FIRST
    msg = (await post_turn(turn_api, conv["id"], "我今天好难过")).json()["agentMessages"][0]
    await _regenerate(turn_api, conv["id"], msg["id"], world, SECOND)
    world.handlers["actor"] = lambda req: "好的。"
    assert (await _select(turn_api, conv["id"], msg["id"], 1)).status_code == 200
    assert (await post_turn(turn_api, conv["id"], "谢谢你")).status_code == 201
    prompt = "\n".join(m.content for m in world.model.history[-1].messages)
    assert FIRST in prompt and SECOND not in prompt


async def test_an_edit_of_a_versioned_message_edits_its_selected_version(turn_api, world) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    world.handlers["actor"] = lambda req: FIRST
    msg = (await post_turn(turn_api, conv["id"], "我今天好难过")).json()["agentMessages"][0]
    await _regenerate(turn_api, conv["id"], msg["id"], world, SECOND)
    url = f"/v1/conversations/{conv['id']}/messages/{msg['id']}"
    assert (await turn_api.client.patch(url, json={"content": "改过的"}, headers=ALICE)).status_code == 200
    await _select(turn_api, conv["id"], msg["id"], 1)
    again = await _select(turn_api, conv["id"], msg["id"], 2)
    assert again.json()["content"] == "改过的"


async def test_versions_are_bounded_and_bad_switches_are_refused(turn_api, world) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    limit = turn_api.settings.limits.max_message_versions
    world.handlers["actor"] = lambda req: FIRST
    msg = (await post_turn(turn_api, conv["id"], "我今天好难过")).json()["agentMessages"][0]
    for i in range(limit - 1):
        assert (await _regenerate(turn_api, conv["id"], msg["id"], world, DISTINCT[i])).status_code == 200
    calls = len(world.calls)
    past = await _regenerate(turn_api, conv["id"], msg["id"])
    assert past.status_code == 409 and past.json()["code"] == "version_limit_reached"
    assert past.json()["details"] == {"messageId": msg["id"], "limit": limit} and len(world.calls) == calls
    missing = await _select(turn_api, conv["id"], msg["id"], limit + 1)
    assert missing.status_code == 404 and missing.json()["code"] == "version_not_found"
    assert (await _select(turn_api, conv["id"], msg["id"], 0)).status_code == 422
    assert (await _select(turn_api, conv["id"], msg["id"], 1, user=BOB)).status_code == 404
    assert (await _select(turn_api, conv["id"], "nope", 1)).json()["code"] == "message_not_found"


async def test_a_switched_version_is_adopted_by_the_next_story_turn(story_api, world, engine) -> None:
    conv, (lia, _, _) = await story_group(story_api, world)
    world.handlers["actor"] = lambda req: "莉娅接过钥匙。"
    a1 = (await say(story_api, conv["id"], "我把铜钥匙递给莉娅"))["agentMessages"][0]
    assert (await _regenerate(story_api, conv["id"], a1["id"], world, "莉娅只看了一眼钥匙，没有接过。")).status_code == 200
    world.handlers["actor"] = lambda req: "莉娅把钥匙还给你。"
    assert (await _select(story_api, conv["id"], a1["id"], 1)).status_code == 200
    await say(story_api, conv["id"], "先把钥匙还我。")
    advances = [r.messages[-1].content for r in requests(world, "story.advance")]
    assert any("莉娅接过钥匙。" in a and "没有接过" not in a for a in advances[-1:]), advances
    state = await saved_state(engine, conv["id"], lia["id"])
    assert state.accepted_message_id == a1["id"]
    assert msgspec.json.encode(state)  # the state decodes and re-encodes
