"""Presence (issue 28): a member only knows the messages it witnessed, on SQLite and PostgreSQL.

A member added after a message never receives it in any prompt (its replies, a force-talk, a
cross reply, a regeneration, its Story history); ``history: all`` shows it the backlog; a muted
member still witnesses; a direct chat never reaches the group."""

from __future__ import annotations

from typing import Any

from app.db.engine import session_factory
from app.story.messages import load_history
from tests.integration.conftest import ALICE, Api
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import World, select, speaker

SECRET = "蓝莓果冻"  # said before the newcomer joined
PRIVATE = "橘子汽水"  # said in the newcomer's direct chat
LINES = ["我在这里陪着你。", "慢慢说，我一直都在听。", "要不要先深呼吸一下？", "今天辛苦了，先照顾好自己。", "我们一起想想办法。",
         "说出来会好受一点。", "你已经做得很好了。", "先喝口水，慢慢来。"]


class Prompts:
    """Every actor and cross-reply request, by the speaking member's name."""

    def __init__(self, world: World) -> None:
        self.seen: list[tuple[str, str, str]] = []
        count = iter(range(1000))

        def answer(req: Any) -> str:
            self.seen.append((speaker(req), req.purpose, "\n".join(m.content for m in req.messages)))
            return f"{LINES[next(count) % len(LINES)]}（{speaker(req)}）"

        world.handlers["actor"] = answer
        world.handlers["cross_reply"] = answer

    def of(self, name: str) -> list[str]:
        return [text for who, _, text in self.seen if who == name]


async def add_member(api: Api, conv_id: str, agent_id: str) -> dict[str, Any]:
    resp = await api.client.post(f"/v1/conversations/{conv_id}/members", json={"agentId": agent_id}, headers=ALICE)
    assert resp.status_code == 200, resp.text
    return resp.json()


async def completed(api: Api, conv_id: str, text: str) -> dict[str, Any]:
    resp = await post_turn(api, conv_id, text)
    assert resp.status_code == 201 and resp.json()["status"] == "completed", resp.text
    return resp.json()


async def group_of_two(api: Api, **settings: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """莉娅 and 周衡 in a group; 小跳 (the newcomer) made but not added."""
    conv, (gentle, planner, joker) = await make_group(api)
    resp = await api.client.delete(f"/v1/conversations/{conv['id']}/members/{joker['id']}", headers=ALICE)
    assert resp.status_code == 200, resp.text
    settings = {"selection": {"mode": "llm"}, **settings}  # the scripted selector decides
    patched = await api.client.patch(f"/v1/conversations/{conv['id']}", json={"settings": settings}, headers=ALICE)
    assert patched.status_code == 200, patched.text
    return conv, [gentle, planner, joker]


async def test_a_member_added_after_a_message_never_receives_it_in_any_prompt(turn_api: Api, world: World, engine) -> None:
    prompts = Prompts(world)
    conv, (gentle, planner, joker) = await group_of_two(turn_api)
    direct = await turn_api.client.post("/v1/conversations", json={"kind": "direct", "agentIds": [joker["id"]]}, headers=ALICE)
    await completed(turn_api, direct.json()["id"], f"我最爱喝{PRIVATE}")
    world.handlers["select"] = select(gentle["id"])
    first = await completed(turn_api, conv["id"], f"我的猫叫{SECRET}，它今天生病了")
    assert sorted(first["userMessage"]["presentAgentIds"]) == sorted([gentle["id"], planner["id"]])

    joined = await add_member(turn_api, conv["id"], joker["id"])
    member = {m["agentId"]: m for m in joined["members"]}
    assert member[joker["id"]]["joinedSeq"] == first["agentMessages"][-1]["seq"] and member[gentle["id"]]["joinedSeq"] == 0

    both = await completed(turn_api, conv["id"], "莉娅、小跳，你们怎么看？")
    assert sorted(m["agentId"] for m in both["agentMessages"]) == sorted([gentle["id"], joker["id"]])
    assert sorted(both["userMessage"]["presentAgentIds"]) == sorted([gentle["id"], planner["id"], joker["id"]])
    spoke = await turn_api.client.post(f"/v1/conversations/{conv['id']}/members/{joker['id']}/speak", json={}, headers=ALICE)
    assert spoke.status_code == 201, spoke.text
    world.handlers["select"] = select(gentle["id"])
    world.handlers["cross_reply.plan"] = lambda req: {"reply": {"fromAgentId": joker["id"], "toAgentId": gentle["id"]},
                                                      "reason": "接一句"}  # fmt: skip
    crossed = await completed(turn_api, conv["id"], "还有别的想法吗")
    assert [m["agentId"] for m in crossed["agentMessages"]] == [gentle["id"], joker["id"]]
    reply = next(m for m in both["agentMessages"] if m["agentId"] == joker["id"])
    regen = await turn_api.client.post(f"/v1/conversations/{conv['id']}/messages/{reply['id']}/regenerate", headers=ALICE)
    assert regen.status_code in (200, 201), regen.text

    purposes = {p for who, p, _ in prompts.seen if who == "小跳"}
    assert purposes == {"actor", "cross_reply"} and len(prompts.of("小跳")) >= 5
    assert all(SECRET not in text for text in prompts.of("小跳"))
    assert all(PRIVATE not in text for text in prompts.of("小跳")[1:])  # [0] is its direct chat
    assert any(SECRET in text for text in prompts.of("莉娅"))

    async with session_factory(engine)() as session:  # its Story reads the same slice
        names = {a["id"]: a["name"] for a in (gentle, planner, joker)}
        newest = crossed["agentMessages"][-1]["seq"] + 1
        for_joker = await load_history(session, conv["id"], newest, names, agent_id=joker["id"])
        for_gentle = await load_history(session, conv["id"], newest, names, agent_id=gentle["id"])
    assert for_joker and all(SECRET not in m.content for m in for_joker)
    assert any(SECRET in m.content for m in for_gentle)


async def test_with_history_all_a_newcomer_reads_the_backlog(turn_api: Api, world: World) -> None:
    prompts = Prompts(world)
    conv, (gentle, _, joker) = await group_of_two(turn_api, history="all")
    world.handlers["select"] = select(gentle["id"])
    await completed(turn_api, conv["id"], f"我的猫叫{SECRET}")
    await add_member(turn_api, conv["id"], joker["id"])
    await completed(turn_api, conv["id"], "小跳，你好")
    assert prompts.of("小跳") and all(SECRET in text for text in prompts.of("小跳"))


async def test_a_muted_member_still_witnesses(turn_api: Api, world: World) -> None:
    prompts = Prompts(world)
    conv, (gentle, _, joker) = await make_group(turn_api)
    muted = await turn_api.client.patch(f"/v1/conversations/{conv['id']}/members/{joker['id']}", json={"muted": True},
                                        headers=ALICE)  # fmt: skip
    assert muted.status_code == 200, muted.text
    world.handlers["select"] = select(gentle["id"])
    said = await completed(turn_api, conv["id"], f"我的猫叫{SECRET}")
    assert joker["id"] in said["userMessage"]["presentAgentIds"]
    assert joker["id"] not in [m["agentId"] for m in said["agentMessages"]]
    await completed(turn_api, conv["id"], "小跳，你记得我的猫叫什么吗？")
    assert prompts.of("小跳") and all(SECRET in text for text in prompts.of("小跳"))


async def test_the_messages_api_says_who_was_present(turn_api: Api, world: World) -> None:
    conv, (gentle, planner, joker) = await group_of_two(turn_api)
    world.handlers["select"] = select(gentle["id"])
    await completed(turn_api, conv["id"], "你好")
    await add_member(turn_api, conv["id"], joker["id"])
    await completed(turn_api, conv["id"], "又见面了")
    page = await turn_api.client.get(f"/v1/conversations/{conv['id']}/messages", headers=ALICE)
    assert page.status_code == 200, page.text
    present = [sorted(m["presentAgentIds"]) for m in sorted(page.json()["items"], key=lambda m: m["seq"])]
    two, three = sorted([gentle["id"], planner["id"]]), sorted([gentle["id"], planner["id"], joker["id"]])
    assert present == [two, two, three, three]


async def test_the_selector_is_told_what_a_newcomer_missed(turn_api: Api, world: World) -> None:
    conv, (gentle, _, joker) = await group_of_two(turn_api)
    asked: list[str] = []

    def choose(req: Any) -> dict[str, Any]:
        asked.append(req.messages[-1].content)
        return select(gentle["id"])(req)

    world.handlers["select"] = choose
    await completed(turn_api, conv["id"], f"我的猫叫{SECRET}")
    await add_member(turn_api, conv["id"], joker["id"])
    body = await completed(turn_api, conv["id"], "它今天不吃饭")
    line = next(x for x in asked[-1].splitlines() if f"id={joker['id']}" in x and "relationshipStage" in x)
    assert "missedMessages=2" in line
    context = {c["agentId"]: c for c in body["agentMessages"][0]["metadata"]["orchestration"]["speakingContext"]["agentContexts"]}
    assert context[joker["id"]]["missedMessages"] == 2 and context[gentle["id"]]["missedMessages"] == 0
