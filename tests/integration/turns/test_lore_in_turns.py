"""Lore in turns (issue 28), on SQLite and PostgreSQL: an entry whose key is in the window joins the
speaking member's prompt and the reply's metadata (``lore``); absent keys, other members' entries
and disabled ones do not; Continue, cross replies and regenerate get lore the same way."""

from __future__ import annotations

from typing import Any

from tests.integration.conftest import ADMIN, ALICE, Api
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import World, select, speaker

LINES = ["我在这里陪着你。", "慢慢说，我一直都在听。", "要不要先深呼吸一下？", "今天辛苦了，先照顾好自己。", "我们一起想想办法。",
         "说出来会好受一点。", "你已经做得很好了。", "先喝口水，慢慢来。"]


def recording(world: World) -> dict[str, list[str]]:
    """Each actor call a fresh line; the system messages each speaker was sent, by name."""
    systems: dict[str, list[str]] = {}
    count = iter(range(1000))

    def actor(req: Any) -> str:
        systems.setdefault(speaker(req), []).append(req.messages[0].content)
        return f"{LINES[next(count) % len(LINES)]}（{speaker(req)}）"

    world.handlers["actor"] = world.handlers["cross_reply"] = actor
    return systems


async def lore(api: Api, url: str, headers: dict[str, str] = ALICE, **body: Any) -> dict[str, Any]:
    resp = await api.client.post(url, json=body, headers=headers)
    assert resp.status_code == 201, resp.text
    return resp.json()


async def reply_of(api: Api, conv_id: str, text: str, **extra: Any) -> dict[str, Any]:
    resp = await post_turn(api, conv_id, text, **extra)
    assert resp.status_code == 201 and resp.json()["status"] == "completed", resp.text
    return resp.json()


async def test_an_entry_whose_key_is_in_the_window_is_in_the_prompt_and_the_metadata(turn_api: Api, world: World) -> None:
    systems = recording(world)
    conv, (gentle, planner, joker) = await make_group(turn_api, replyLimit=1, selection={"mode": "llm"})  # the model picks
    world.handlers["select"] = select(gentle["id"])
    url = f"/v1/conversations/{conv['id']}/lore"
    keep = await lore(turn_api, url, keys=["雪城"], content="雪城终年积雪，城墙是冰做的。", priority=5)
    guarded = await lore(turn_api, url, keys=["雪城"], secondaryKeys=["国王"], content="雪城的国王很年轻。", priority=9)
    only_planner = await lore(turn_api, url, keys=["雪城"], content="周衡去过雪城三次。", memberIds=[planner["id"]])
    off = await lore(turn_api, url, keys=["雪城"], content="不该出现的设定。")
    await turn_api.client.patch(f"/v1/lore/{off['id']}", json={"enabled": False}, headers=ALICE)
    own = await lore(turn_api, f"/v1/agents/{gentle['id']}/lore", ADMIN, keys=["雪城"], content="莉娅小时候住在雪城。", priority=1)
    await lore(turn_api, f"/v1/agents/{joker['id']}/lore", ADMIN, keys=["雪城"], content="小跳讨厌下雪。")

    absent = await reply_of(turn_api, conv["id"], "我今天好难过")
    assert absent["agentMessages"][0]["metadata"]["lore"] == []
    assert "雪城" not in systems["莉娅"][-1]

    turn = await reply_of(turn_api, conv["id"], "我想去雪城看看")
    message = turn["agentMessages"][0]
    assert message["agentId"] == gentle["id"]
    assert message["metadata"]["lore"] == [{"id": keep["id"], "keys": ["雪城"], "priority": 5},
                                           {"id": own["id"], "keys": ["雪城"], "priority": 1}]  # fmt: skip
    system = systems["莉娅"][-1]
    assert "设定" in system and system.index("雪城终年积雪，城墙是冰做的。") < system.index("莉娅小时候住在雪城。")
    for other in ("雪城的国王很年轻。", "周衡去过雪城三次。", "不该出现的设定。", "小跳讨厌下雪。"):
        assert other not in system  # no secondary key, another member's, disabled, another agent's
    stored = await turn_api.client.get(f"/v1/conversations/{conv['id']}/messages?limit=1", headers=ALICE)
    assert stored.json()["items"][0]["metadata"]["lore"] == message["metadata"]["lore"]

    world.handlers["select"] = select(planner["id"])  # the key is still in the window: the planner's own view
    turn = await reply_of(turn_api, conv["id"], "国王会欢迎我们吗？")
    used = [e["id"] for e in turn["agentMessages"][0]["metadata"]["lore"]]
    assert used == [guarded["id"], keep["id"], only_planner["id"]]

    await turn_api.client.patch(url.removesuffix("/lore"), json={"settings": {"lore": {"tokenBudget": 0}}}, headers=ALICE)
    turn = await reply_of(turn_api, conv["id"], "雪城还远吗？")
    assert turn["agentMessages"][0]["metadata"]["lore"] == []  # a budget of 0: lore is off


async def test_continue_cross_replies_and_regenerate_get_lore_too(turn_api: Api, world: World) -> None:
    systems = recording(world)
    conv, (gentle, planner, _) = await make_group(turn_api, replyLimit=1, selection={"mode": "llm"})  # the model picks
    world.handlers["select"] = select(gentle["id"])
    world.handlers["cross_reply.plan"] = {"reply": {"fromAgentId": planner["id"], "toAgentId": gentle["id"]}, "reason": "补充"}
    entry = await lore(turn_api, f"/v1/conversations/{conv['id']}/lore", keys=["雪城"], content="雪城终年积雪。")
    expected = [{"id": entry["id"], "keys": ["雪城"], "priority": 0}]

    turn = await reply_of(turn_api, conv["id"], "我想去雪城看看")
    kinds = {m["metadata"]["replyKind"]: m for m in turn["agentMessages"]}
    assert set(kinds) == {"primary", "cross"}, turn
    assert all(m["metadata"]["lore"] == expected for m in kinds.values())
    assert "雪城终年积雪。" in systems["周衡"][-1]  # the cross reply's prompt

    cont = await turn_api.client.post(f"/v1/conversations/{conv['id']}/continue", json={"agentId": gentle["id"]},
                                      headers=ALICE)  # fmt: skip
    assert cont.status_code == 201, cont.text
    assert cont.json()["agentMessages"][0]["metadata"]["lore"] == expected

    primary = kinds["primary"]
    regen = await turn_api.client.post(f"/v1/conversations/{conv['id']}/messages/{primary['id']}/regenerate",
                                       headers=ALICE)  # fmt: skip
    assert regen.status_code in (200, 201), regen.text
    assert regen.json()["metadata"]["lore"] == expected
    assert "雪城终年积雪。" in systems["莉娅"][-1]


async def test_lore_use_counts_the_replies_each_entry_was_in(turn_api: Api, world: World) -> None:
    recording(world)
    conv, (gentle, _, _) = await make_group(turn_api, replyLimit=1, selection={"mode": "llm"})  # the model picks
    world.handlers["select"] = select(gentle["id"])
    url = f"/v1/conversations/{conv['id']}/lore"
    city = await lore(turn_api, url, keys=["雪城"], content="雪城终年积雪。")
    sea = await lore(turn_api, url, keys=["大海"], content="大海是灰色的。")
    never = await lore(turn_api, url, keys=["月亮"], content="月亮是方的。")
    own = await lore(turn_api, f"/v1/agents/{gentle['id']}/lore", ADMIN, keys=["大海"], content="莉娅怕水。")
    for text in ("我想去雪城看看", "雪城和大海哪个好？", "今天好累"):
        await reply_of(turn_api, conv["id"], text)
    await turn_api.client.delete(f"/v1/lore/{sea['id']}", headers=ALICE)

    resp = await turn_api.client.get("/v1/analytics/lore-use", params={"conversation": conv["id"]}, headers=ADMIN)
    assert resp.status_code == 200, resp.text
    rows = {r["entryId"]: r for r in resp.json()}
    counts = {k: (r["attachedTo"], r["replies"], r["conversations"]) for k, r in rows.items()}
    # the window keeps the key: the third turn's window still has both lines with a key
    assert counts == {city["id"]: ("conversation", 3, 1), own["id"]: ("agent", 2, 1), sea["id"]: ("deleted", 2, 1),
                      never["id"]: ("conversation", 0, 0)}  # fmt: skip
    assert rows[city["id"]]["lastUsedAt"] and rows[never["id"]]["lastUsedAt"] is None
    assert rows[city["id"]]["keys"] == ["雪城"] and rows[sea["id"]]["keys"] == []
    assert [r["entryId"] for r in resp.json()][0] == city["id"]  # most used first
