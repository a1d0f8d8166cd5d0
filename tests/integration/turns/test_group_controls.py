"""Group controls (issue 28): mute, force-talk and reply order, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select as sql_select

from app.db.engine import session_factory
from app.db.models import SpeakerDecision
from tests.integration.conftest import ALICE, BOB, Api
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import World, select, speaker

LINES = ["我在这里陪着你。", "慢慢说，我一直都在听。", "要不要先深呼吸一下？", "今天辛苦了，先照顾好自己。", "我们一起想想办法。",
         "说出来会好受一点。", "你已经做得很好了。", "先喝口水，慢慢来。"]


def fresh_lines(world: World) -> None:
    """Every actor call a line of its own, so no reply is dropped as a repeat of the window."""
    count = iter(range(1000))
    world.handlers["actor"] = lambda req: f"{LINES[next(count) % len(LINES)]}（{speaker(req)}）"


def members_url(conv_id: str, agent_id: str) -> str:
    return f"/v1/conversations/{conv_id}/members/{agent_id}"


async def speakers(api: Api, conv_id: str, text: str, **extra: Any) -> list[str]:
    resp = await post_turn(api, conv_id, text, **extra)
    assert resp.status_code == 201 and resp.json()["status"] == "completed", resp.text
    return [m["agentId"] for m in resp.json()["agentMessages"]]


async def test_a_muted_member_is_never_chosen_but_answers_when_named_or_asked_to_speak(turn_api: Api, world: World) -> None:
    fresh_lines(world)
    conv, (gentle, planner, joker) = await make_group(turn_api)
    muted = await turn_api.client.patch(members_url(conv["id"], gentle["id"]), json={"muted": True}, headers=ALICE)
    assert muted.status_code == 200, muted.text
    assert [(m["agentId"], m["muted"]) for m in muted.json()["members"]] == [
        (gentle["id"], True), (planner["id"], False), (joker["id"], False)]
    world.handlers["select"] = select(gentle["id"])  # the model wants the muted comforter
    for text in ("我今天好难过", "真的很难受", "我想哭"):  # a sad user: the scorer's first pick is the comforter too
        assert gentle["id"] not in await speakers(turn_api, conv["id"], text)
    prompt_calls = [c for c in world.calls if c == "select"]
    assert prompt_calls  # the selector was asked, without the muted member among the candidates
    assert await speakers(turn_api, conv["id"], "莉娅，你在吗？") == [gentle["id"]]  # named: it answers

    spoke = await turn_api.client.post(f"{members_url(conv['id'], gentle['id'])}/speak", json={}, headers=ALICE)
    assert spoke.status_code == 201, spoke.text
    assert spoke.json()["userMessage"] is None and [m["agentId"] for m in spoke.json()["agentMessages"]] == [gentle["id"]]

    unmuted = await turn_api.client.patch(members_url(conv["id"], gentle["id"]), json={"muted": False}, headers=ALICE)
    assert not unmuted.json()["members"][0]["muted"] and unmuted.json()["version"] > muted.json()["version"]


async def test_member_controls_have_their_error_codes(turn_api: Api) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    other, (stranger, _, _) = await make_group(turn_api)

    async def status(method: str, url: str, body: Any, headers: dict[str, str] = ALICE) -> tuple[int, str]:
        resp = await turn_api.client.request(method, url, json=body, headers=headers)
        return resp.status_code, resp.json().get("code", "")

    assert await status("PATCH", members_url(conv["id"], stranger["id"]), {"muted": True}) == (404, "member_not_found")
    assert (await status("PATCH", members_url(conv["id"], gentle["id"]), {"muted": "yes"}))[0] == 422
    assert await status("PATCH", members_url(conv["id"], gentle["id"]), {"muted": True}, BOB) == (404, "conversation_not_found")
    assert await status("POST", f"{members_url(conv['id'], gentle['id'])}/speak", {}) == (422, "nothing_to_continue")
    await post_turn(turn_api, conv["id"], "你好")
    assert await status("POST", f"{members_url(conv['id'], stranger['id'])}/speak", {}) == (422, "agent_not_member")
    bad = await turn_api.client.patch(f"/v1/conversations/{conv['id']}", json={"settings": {"replyOrder": "random"}},
                                      headers=ALICE)  # fmt: skip
    assert bad.status_code == 422, bad.text


async def test_list_order_goes_round_the_members_without_asking_the_selector(turn_api: Api, world: World, engine) -> None:
    fresh_lines(world)
    conv, (gentle, planner, joker) = await make_group(turn_api, replyOrder="list")
    world.handlers["select"] = select(joker["id"])
    order = [s for text in ("你好", "今天天气不错", "我们聊点什么吧", "还有人在吗") for s in await speakers(turn_api, conv["id"], text)]
    assert order == [gentle["id"], planner["id"], joker["id"], gentle["id"]]
    assert "select" not in world.calls
    async with session_factory(engine)() as s:
        rows = list(await s.scalars(sql_select(SpeakerDecision).where(SpeakerDecision.conversation_id == conv["id"],
                                                                      SpeakerDecision.selected)))  # fmt: skip
    assert {(r.selected_by, r.decided_by, r.selection_path) for r in rows} == {("order", "order", "order")}


async def test_pooled_order_lets_everyone_speak_once_before_anyone_twice(turn_api: Api, world: World) -> None:
    fresh_lines(world)
    conv, members = await make_group(turn_api, replyOrder="pooled")
    said = [s for text in ("我今天好难过", "还是很难过", "难过得睡不着", "今天也难过", "又难过了", "难过")
            for s in await speakers(turn_api, conv["id"], text)]  # fmt: skip
    ids = sorted(m["id"] for m in members)
    assert sorted(said[:3]) == ids and sorted(said[3:]) == ids, said
    assert said[0] == members[0]["id"]  # inside the pool the scorer still decides: the comforter first for a sad user


async def test_manual_order_answers_only_the_named(turn_api: Api) -> None:
    conv, (gentle, planner, _) = await make_group(turn_api, replyOrder="manual")
    resp = await post_turn(turn_api, conv["id"], "大家好")
    assert resp.status_code == 201 and resp.json()["status"] == "completed", resp.text
    assert resp.json()["agentMessages"] == [] and resp.json()["userMessage"]["content"] == "大家好"
    assert await speakers(turn_api, conv["id"], "周衡，你怎么看？") == [planner["id"]]
