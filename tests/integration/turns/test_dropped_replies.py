"""Issue 9 item 8: an off-language reply is regenerated with the language restated first; a turn
whose every reply was dropped fails with ``all_replies_dropped`` and names, per agent, the checks
that dropped it. Runs on SQLite and PostgreSQL (the ``engine``/``settings`` fixtures)."""

from __future__ import annotations

from sqlalchemy import select as sa_select

from app.db.engine import session_factory
from app.db.models import QualityEvent, SpeakerDecision
from tests.integration.conftest import ALICE, Api
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import World, persona, select, speaker

ZH_ONLY = "请只用简体中文回复。"


def _restated(request) -> bool:
    return request.messages[0].role == "system" and request.messages[0].content.startswith(ZH_ONLY)


async def test_an_off_language_reply_is_regenerated_with_the_language_first(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    world.handlers["actor"] = lambda req: "我在这里陪着你。" if _restated(req) else "I'm here for you."
    body = (await post_turn(turn_api, conv["id"], "我今天好难过")).json()
    assert body["status"] == "completed", body["error"]
    assert [m["content"] for m in body["agentMessages"]] == ["我在这里陪着你。"]
    quality = body["orchestration"]["quality"][gentle["id"]]
    assert quality["passed"] and quality["attempts"] == 2 and quality["regeneratedFor"][0].startswith("wrong_script")


async def test_a_turn_with_every_reply_dropped_names_the_checks(turn_api: Api, world: World, engine) -> None:
    conv, (gentle, planner, third) = await make_group(turn_api, replyLimit=2, selection={"mode": "llm"})
    world.handlers["select"] = select(gentle["id"], planner["id"])
    world.handlers["actor"] = lambda req: "；" * 300 if speaker(req) == "周衡" else "I only speak English here."
    body = (await post_turn(turn_api, conv["id"], "大家怎么看？我好难过")).json()

    assert body["status"] == "failed" and body["agentMessages"] == []
    error = body["error"]
    assert error["code"] == "all_replies_dropped"
    by_agent = {a["agentId"]: a["problems"] for a in error["details"]["agents"]}
    # the one member not chosen stood in once (scheduling.selection.stand_in), and was dropped too
    assert body["orchestration"]["standIn"] == {"agentId": third["id"], "after": [gentle["id"], planner["id"]]}
    assert by_agent == {gentle["id"]: ["wrong_script"], planner["id"]: ["no_words", "wrong_script"],
                        third["id"]: ["wrong_script"]}  # fmt: skip
    # each reply was regenerated once before it was dropped (a cancelled speculative draft aside)
    assert all(body["orchestration"]["quality"][a]["attempts"] == 2 for a in (gentle["id"], planner["id"], third["id"]))

    read = (await turn_api.client.get(f"/v1/conversations/{conv['id']}/turns/{body['turnId']}", headers=ALICE)).json()
    assert read["status"] == "failed" and read["error"] == error
    async with session_factory(engine)() as s:
        events = list(await s.scalars(sa_select(QualityEvent).where(QualityEvent.turn_id == body["turnId"])))
        decisions = list(await s.scalars(sa_select(SpeakerDecision).where(SpeakerDecision.turn_id == body["turnId"])))
    dropped = sorted((e.agent_id == planner["id"], e.reason) for e in events if e.action == "dropped")
    assert dropped == [(False, "wrong_script"), (False, "wrong_script"), (True, "no_words"), (True, "wrong_script")]
    assert len(decisions) == 3  # the failure is still analysable


async def test_when_every_chosen_reply_is_dropped_the_next_ranked_member_answers_once(turn_api: Api, world: World) -> None:
    """Qwen2.5-0.5B, one reply a turn with the Story on: three of four turns ended with no reply
    while another member could still speak. The stand-in is the scorer's best not yet tried."""
    conv, (gentle, planner, joker) = await make_group(turn_api, replyLimit=1, selection={"mode": "llm"})
    world.handlers["select"] = select(planner["id"])
    world.handlers["actor"] = lambda req: "；" * 300 if speaker(req) == "周衡" else f"{speaker(req)}在呢，慢慢说。"
    body = (await post_turn(turn_api, conv["id"], "大家怎么看？我好难过")).json()

    assert body["status"] == "completed", body["error"]
    stand_in = body["orchestration"]["standIn"]
    assert stand_in["after"] == [planner["id"]] and stand_in["agentId"] in (gentle["id"], joker["id"])
    ranked = [c["agentId"] for c in sorted(body["orchestration"]["selection"]["candidates"], key=lambda c: c["rank"])]
    assert stand_in["agentId"] == next(a for a in ranked if a != planner["id"])
    assert [m["agentId"] for m in body["agentMessages"]] == [stand_in["agentId"]]
    assert body["agentMessages"][0]["content"].endswith("在呢，慢慢说。")
    assert body["agentMessages"][0]["metadata"]["orchestration"]["standIn"] == stand_in  # queryable per message
    assert body["orchestration"]["quality"][planner["id"]]["passed"] is False

    # a member the user named has no stand-in: the user asked for that one
    named = (await post_turn(turn_api, conv["id"], "周衡，你怎么看？")).json()
    assert named["status"] == "failed" and named["error"]["code"] == "all_replies_dropped"
    assert "standIn" not in named["orchestration"]


async def test_model_errors_are_named_too(turn_api: Api, world: World) -> None:
    from app.errors import ModelTimeout

    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    world.handlers["actor"] = ModelTimeout("actor down")
    body = (await post_turn(turn_api, conv["id"], "我今天好难过")).json()
    assert body["error"]["code"] == "all_replies_dropped"
    assert body["error"]["details"]["agents"] == [
        {"agentId": gentle["id"], "replyKind": "primary", "problems": ["model_error"],
         "reasons": ["model_error: model_timeout: actor down"]},
    ]  # fmt: skip


async def test_a_reply_inside_another_written_beside_it_is_never_saved_twice(turn_api: Api, world: World) -> None:
    """Two replies finish together (Qwen2.5-0.5B saved "周衡，你有啥问题吗？" beside "周衡，你有啥问题吗？
    如果需要，可以和我聊聊。" in one turn): the second is checked against the first before either is
    saved, tried once more, and dropped when it says the same again."""
    conv, (gentle, planner, _) = await make_group(turn_api, replyLimit=2, selection={"mode": "llm"})
    world.handlers["select"] = select(gentle["id"], planner["id"])
    longer, inside = "你有啥问题吗？如果需要，可以和我聊聊。", "你有啥问题吗？我们慢慢聊。"[:7]
    world.handlers["actor"] = lambda req: longer if speaker(req) == "周衡" else inside
    body = (await post_turn(turn_api, conv["id"], "明天要面试了，我好紧张，睡不着。")).json()

    assert body["status"] == "completed", body["error"]
    assert len(body["agentMessages"]) == 1, body["agentMessages"]
    copied = [q for q in body["orchestration"]["quality"].values() if not q["passed"]]
    assert len(copied) == 1 and copied[0]["problems"][0].startswith("duplicate"), body["orchestration"]["quality"]
