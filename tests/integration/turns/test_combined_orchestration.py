"""Issue 32: ``settings.orchestration: combined``: one structured call for intent, emotion and the
speaker choice, recorded as the staged stages record them, falling back as they do; and the turn's
``orchestration.cost`` (calls and tokens per stage, calls before the first words). SQLite and
PostgreSQL. The group is ``make_group``'s (see test_selection_modes.py for its scores)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from sqlalchemy import select as sa_select

from app.db.engine import session_factory
from app.db.models import SpeakerDecision, TurnStageMetric
from app.errors import ModelTimeout
from tests.integration.conftest import ALICE, Api
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import EMOTION_SAD, INTENT_CHAT, World, select

SAD_AND_LOST = {**EMOTION_SAD, "needsAdvice": True, "reason": "难过，也想要建议"}
COMBINED = {"orchestration": "combined", "selection": {"mode": "hybrid", "hybridMargin": 1.0}}


def reading(*ids: str, emotion: dict[str, Any] = EMOTION_SAD, intent: dict[str, Any] = INTENT_CHAT,
            cross: tuple[str, str] | None = None) -> Any:  # fmt: skip
    pair = {"fromAgentId": cross[0], "toAgentId": cross[1], "reason": "两种看法"} if cross else None
    return lambda req: {"intent": {**intent, "reason": "闲聊"}, "emotion": emotion,
                        "speakers": {"selectedAgentIds": list(ids), "reason": "适合"}, "crossReply": pair}  # fmt: skip


@pytest.fixture(autouse=True)
def fresh_replies(world: World) -> None:
    lines = itertools.cycle(["我在这里，慢慢说。", "先深呼吸，我们一件一件来。", "今天辛苦了，想聊什么都行。",
                             "要不要先吃点东西？", "我记得你上次也提过这件事。", "换个角度看，也许没那么糟。"])
    world.handlers["actor"] = lambda req: next(lines)


async def _turn(api: Api, conv_id: str, text: str = "我今天好难过") -> dict[str, Any]:
    resp = await post_turn(api, conv_id, text)
    assert resp.status_code == 201, resp.text
    return resp.json()


async def test_combined_asks_one_call_and_records_three_judgements(turn_api: Api, world: World, engine: Any) -> None:
    conv, (gentle, planner, _) = await make_group(turn_api, **COMBINED)
    world.handlers["combined"] = reading(planner["id"], emotion=SAD_AND_LOST)  # a close call: the choice counts
    body = await _turn(turn_api, conv["id"], "我好难过，也不知道该怎么办")
    assert "intent" not in world.calls and "emotion" not in world.calls and "select" not in world.calls
    assert world.calls.count("combined") == 1
    orch = body["orchestration"]
    assert orch["mode"] == "combined"
    assert orch["emotion"]["needsAdvice"] is True and orch["emotion"]["run"]["via"] == "combined"
    assert orch["intent"]["source"] == "llm" and orch["intent"]["run"]["via"] == "combined"
    sel = orch["selection"]
    assert (sel["path"], sel["llm"]["source"], sel["llm"]["via"]) == ("llm", "llm", "combined")
    assert planner["id"] in sel["selectedAgentIds"]
    cost = orch["cost"]
    assert cost["orchestration"] == "combined" and cost["byStage"]["combined"]["calls"] == 1
    assert "intent" not in cost["byStage"] and cost["modelCalls"] == sum(s["calls"] for s in cost["byStage"].values())
    assert cost["callsBeforeFirstToken"] is not None
    async with session_factory(engine)() as s:
        stages = set(await s.scalars(sa_select(TurnStageMetric.stage).where(TurnStageMetric.turn_id == body["turnId"])))
        rows = list(await s.scalars(sa_select(SpeakerDecision).where(SpeakerDecision.turn_id == body["turnId"])))
    assert "combined" in stages and not {"intent", "emotion", "select"} & stages
    assert {r.emotion_source for r in rows} == {"llm"} and {r.selection_path for r in rows} == {"llm"}


async def test_a_clear_scorer_decision_stands_in_hybrid(turn_api: Api, world: World) -> None:
    conv, (gentle, _, joker) = await make_group(turn_api, **COMBINED)
    world.handlers["combined"] = reading(joker["id"])  # sad, comfort needed: the scorer is sure of 莉娅
    body = await _turn(turn_api, conv["id"])
    sel = body["orchestration"]["selection"]
    assert (sel["path"], sel["llm"]["source"]) == ("scorer", "skipped")
    assert [m["agentId"] for m in body["agentMessages"]] == [gentle["id"]]


async def test_a_failed_combined_call_falls_back_like_the_staged_stages(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api, orchestration="combined", selection={"mode": "llm"})
    world.handlers["combined"] = ModelTimeout("combined call timed out")
    body = await _turn(turn_api, conv["id"])
    orch = body["orchestration"]
    assert orch["intent"]["source"] == "fallback" and orch["emotion"]["source"] == "fallback"
    assert orch["emotion"]["run"]["error"]["code"] == "model_timeout"
    sel = orch["selection"]
    assert (sel["path"], sel["llm"]["source"]) == ("fallback", "fallback")
    assert body["status"] == "completed" and body["agentMessages"]
    assert orch["cost"]["byStage"]["combined"]["calls"] == 1


async def test_an_invalid_speaker_choice_is_repaired_once_then_the_scorer_decides(turn_api: Api, world: World) -> None:
    conv, _ = await make_group(turn_api, orchestration="combined", selection={"mode": "llm"})
    world.handlers["combined"] = reading("nobody")
    body = await _turn(turn_api, conv["id"])
    assert world.calls.count("combined") == 2  # one repair
    assert body["orchestration"]["selection"]["path"] == "fallback"
    assert body["orchestration"]["emotion"]["source"] == "fallback"


async def test_staged_turns_report_their_cost_per_stage(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api, selection={"mode": "llm"})
    world.handlers["select"] = select(gentle["id"])
    body = await _turn(turn_api, conv["id"])
    cost = body["orchestration"]["cost"]
    assert body["orchestration"]["mode"] == "staged" and cost["orchestration"] == "staged"
    assert {"intent", "emotion", "select", "actor"} <= set(cost["byStage"])
    assert cost["byStage"]["select"]["calls"] == 1
    assert cost["callsBeforeFirstToken"] >= 2  # intent and emotion, then the selector, before the reply's words


async def test_the_orchestration_setting_is_validated(turn_api: Api) -> None:
    conv, _ = await make_group(turn_api)
    url = f"/v1/conversations/{conv['id']}"
    bad = await turn_api.client.patch(url, json={"settings": {"orchestration": "parallel"}}, headers=ALICE)
    assert bad.status_code == 422 and bad.json()["code"] == "invalid_settings"
    good = await turn_api.client.patch(url, json={"settings": {"orchestration": "combined"}}, headers=ALICE)
    assert good.status_code == 200 and good.json()["settings"]["orchestration"] == "combined"


async def test_combined_bets_on_the_scorers_pick_alone_where_staged_adds_the_next_ranked(
        turn_api: Api, world: World) -> None:  # fmt: skip
    started = {}
    for mode in ("staged", "combined"):
        conv, (_, planner, _) = await make_group(turn_api, orchestration=mode, selection={"mode": "llm"})
        world.handlers["combined"] = reading(planner["id"], emotion=SAD_AND_LOST)
        world.handlers["select"] = select(planner["id"])
        body = await _turn(turn_api, conv["id"], "我好难过，也不知道该怎么办")
        started[mode] = body["orchestration"]["speculation"]["started"]
        actors = body["orchestration"]["cost"]["byStage"]["actor"]
        if mode == "combined":  # no cancelled bet: a call the user pays for is a reply or a miss
            assert actors["cancelled"] == 0 or body["orchestration"]["speculation"]["misses"]
    assert started["staged"] and started["combined"]
    assert len(started["combined"]) == len(started["staged"]) - 1


async def test_a_reading_without_a_cross_reply_saves_the_plan_call(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api, **COMBINED)
    world.handlers["combined"] = reading(gentle["id"])
    body = await _turn(turn_api, conv["id"])
    assert "cross_reply.plan" not in world.calls and "cross_reply" not in world.calls
    plan = body["orchestration"]["crossReplyPlan"]
    assert plan["shouldReply"] is False and plan["runs"][0]["via"] == "combined"
    assert "cross_reply" not in body["orchestration"]["cost"]["byStage"]


async def test_a_cross_reply_planned_with_the_reading_is_written_without_a_plan_call(turn_api: Api,
                                                                                     world: World) -> None:  # fmt: skip
    conv, (gentle, _, joker) = await make_group(turn_api, **COMBINED)
    world.handlers["combined"] = reading(gentle["id"], cross=(joker["id"], gentle["id"]))
    body = await _turn(turn_api, conv["id"])
    assert "cross_reply.plan" not in world.calls and world.calls.count("cross_reply") == 1
    cross = [m for m in body["agentMessages"] if m["replyKind"] == "cross"]
    assert [(m["agentId"], m["respondToAgentId"]) for m in cross] == [(joker["id"], gentle["id"])]
    plan = body["orchestration"]["crossReplyPlan"]
    assert (plan["fromAgentId"], plan["reason"], plan["runs"][0]["via"]) == (joker["id"], "两种看法", "combined")


async def test_a_planned_cross_reply_to_a_member_who_did_not_reply_asks_the_plan_call(turn_api: Api,
                                                                                      world: World) -> None:  # fmt: skip
    conv, (gentle, planner, joker) = await make_group(turn_api, **COMBINED)
    world.handlers["combined"] = reading(gentle["id"], cross=(gentle["id"], planner["id"]))  # 周衡 did not reply
    body = await _turn(turn_api, conv["id"])
    assert [m["agentId"] for m in body["agentMessages"]] == [gentle["id"]]
    assert world.calls.count("cross_reply.plan") == 1  # as a staged turn would
    assert "via" not in body["orchestration"]["crossReplyPlan"]["runs"][0]
