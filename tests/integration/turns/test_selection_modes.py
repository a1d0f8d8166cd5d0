"""``selection.mode`` through the app: whether the selection model is asked, and the path, margin
and agreement recorded in the turn result, the message metadata and the decision rows (SQLite and
PostgreSQL).

The group (``make_group``): 莉娅 comfort 0.95 / analysis 0.2, 周衡 analysis 0.95 / comfort 0.2, 小跳
playful 0.95 / comfort 0.3, no history. A sad user (comfort needed) gives 莉娅 2.4 × 0.95 = 2.28 and
小跳 2.4 × 0.3 = 0.72: a clear margin of 1.56. Sad and wanting advice gives 莉娅 2.28 + 2.1 × 0.2 =
2.70 and 周衡 0.48 + 2.1 × 0.95 = 2.475: a close call, margin 0.225.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest
from sqlalchemy import select as sa_select

from app.db.engine import session_factory
from app.db.models import SpeakerDecision
from app.errors import ModelTimeout
from scheduling import DEFAULT_HYBRID_MARGIN
from tests.integration.conftest import ADMIN, ALICE, Api
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import EMOTION_SAD, World, select

SAD_AND_LOST = {**EMOTION_SAD, "needsAdvice": True, "reason": "难过，也想要建议"}
CLEAR, CLOSE = 1.56, 0.225
HYBRID = {"mode": "hybrid", "hybridMargin": 1.0}


@pytest.fixture(autouse=True)
def fresh_replies(world: World) -> None:
    """A different reply each call, so no turn trips the repeated-reply checks."""
    lines = itertools.cycle(["我在这里，慢慢说。", "先深呼吸，我们一件一件来。", "今天辛苦了，想聊什么都行。",
                             "要不要先吃点东西？", "我记得你上次也提过这件事。", "换个角度看，也许没那么糟。"])
    world.handlers["actor"] = lambda req: next(lines)


async def _rows(engine: Any, turn_id: str) -> list[SpeakerDecision]:
    async with session_factory(engine)() as s:
        return list(await s.scalars(sa_select(SpeakerDecision).where(SpeakerDecision.turn_id == turn_id)))


async def _turn(api: Api, conv_id: str, text: str = "我今天好难过") -> dict[str, Any]:
    resp = await post_turn(api, conv_id, text)
    assert resp.status_code == 201, resp.text
    return resp.json()


def _recorded(rows: list[SpeakerDecision]) -> set[tuple[Any, ...]]:
    """The per-turn fields, which every candidate row of the turn carries."""
    return {(r.selection_mode, r.selection_path, None if r.scorer_margin is None else round(r.scorer_margin, 6),
             r.llm_agreed) for r in rows}  # fmt: skip


async def test_scorer_mode_never_asks_the_selection_model_even_on_a_close_call(turn_api: Api, world: World,
                                                                              engine: Any) -> None:  # fmt: skip
    conv, (gentle, _, joker) = await make_group(turn_api, selection={"mode": "scorer"})
    world.handlers["emotion"] = SAD_AND_LOST
    world.handlers["select"] = select(joker["id"])  # would disagree, if it were asked
    body = await _turn(turn_api, conv["id"], "我好难过，也不知道该怎么办")
    assert "select" not in world.calls
    sel = body["orchestration"]["selection"]
    assert (sel["mode"], sel["path"], sel["llmAgreed"], sel["llm"]["source"]) == ("scorer", "scorer", None, "skipped")
    assert sel["scorerMargin"] == pytest.approx(CLOSE) and sel["scorerPick"] == [gentle["id"]]
    assert [m["agentId"] for m in body["agentMessages"]] == [gentle["id"]]
    assert body["agentMessages"][0]["metadata"]["orchestration"]["selection"]["path"] == "scorer"
    rows = await _rows(engine, body["turnId"])
    assert _recorded(rows) == {("scorer", "scorer", CLOSE, None)}
    assert {r.decided_by for r in rows} == {"fallback"}  # the scorer decided (selected_by keeps its vocabulary)


async def test_hybrid_keeps_a_clear_turn_with_the_scorer(turn_api: Api, world: World, engine: Any) -> None:
    conv, (gentle, _, joker) = await make_group(turn_api, selection=HYBRID)
    world.handlers["select"] = select(joker["id"])
    body = await _turn(turn_api, conv["id"])
    assert "select" not in world.calls
    sel = body["orchestration"]["selection"]
    assert (sel["mode"], sel["path"], sel["hybridMargin"]) == ("hybrid", "scorer", 1.0)
    assert sel["scorerMargin"] == pytest.approx(CLEAR) and sel["selectedAgentIds"] == [gentle["id"]]
    assert _recorded(await _rows(engine, body["turnId"])) == {("hybrid", "scorer", CLEAR, None)}
    # The scorer's pick still started at once, while intent and emotion were being read.
    assert body["orchestration"]["speculation"]["hits"] == [gentle["id"]]


async def test_hybrid_asks_the_model_on_a_close_call_and_records_its_disagreement(turn_api: Api, world: World,
                                                                                 engine: Any) -> None:  # fmt: skip
    conv, (gentle, planner, _) = await make_group(turn_api, selection=HYBRID)
    world.handlers["emotion"] = SAD_AND_LOST
    world.handlers["select"] = select(planner["id"], reason="先给个建议")
    body = await _turn(turn_api, conv["id"], "我好难过，也不知道该怎么办")
    assert world.calls.count("select") == 1
    sel = body["orchestration"]["selection"]
    assert (sel["path"], sel["llmAgreed"], sel["scorerPick"]) == ("llm", False, [gentle["id"]])
    assert sel["scorerMargin"] == pytest.approx(CLOSE)
    assert [m["agentId"] for m in body["agentMessages"]] == [planner["id"]]
    rows = await _rows(engine, body["turnId"])
    assert _recorded(rows) == {("hybrid", "llm", CLOSE, False)} and {r.decided_by for r in rows} == {"llm"}


async def test_a_close_call_asks_the_model_only_between_the_close_members(turn_api: Api, world: World,
                                                                         engine: Any) -> None:  # fmt: skip
    """Sad and lost: 莉娅 2.70, 周衡 2.475 (within the margin 1.0), 小跳 0.93 (far below): the model
    sees the two contenders only, and its pick of 小跳 is refused like an unknown id."""
    conv, (gentle, planner, joker) = await make_group(turn_api, selection=HYBRID)
    world.handlers["emotion"] = SAD_AND_LOST
    asked: list[str] = []

    def far_below(req: Any) -> dict[str, Any]:
        asked.append("\n".join(m.content for m in req.messages))
        return {"selectedAgentIds": [joker["id"]], "reason": "逗她开心"}

    world.handlers["select"] = far_below
    body = await _turn(turn_api, conv["id"], "我好难过，也不知道该怎么办")
    assert world.calls.count("select") == 2  # one repair, then the scorer
    first = asked[0]  # (the repair names the refused id)
    assert gentle["id"] in first and planner["id"] in first and joker["id"] not in first
    sel = body["orchestration"]["selection"]
    assert (sel["path"], sel["selectedAgentIds"]) == ("fallback", [gentle["id"]])
    assert [m["agentId"] for m in body["agentMessages"]] == [gentle["id"]]


async def test_a_model_that_agrees_with_the_scorer_is_recorded_as_agreeing(turn_api: Api, world: World,
                                                                          engine: Any) -> None:  # fmt: skip
    conv, (gentle, _, _) = await make_group(turn_api, selection=HYBRID)
    world.handlers["emotion"] = SAD_AND_LOST
    world.handlers["select"] = select(gentle["id"])
    body = await _turn(turn_api, conv["id"], "我好难过，也不知道该怎么办")
    assert (body["orchestration"]["selection"]["path"], body["orchestration"]["selection"]["llmAgreed"]) == ("llm", True)
    assert _recorded(await _rows(engine, body["turnId"])) == {("hybrid", "llm", CLOSE, True)}


async def test_a_model_asked_that_fails_leaves_the_turn_to_the_scorer_as_fallback(turn_api: Api, world: World,
                                                                                 engine: Any) -> None:  # fmt: skip
    conv, (gentle, _, _) = await make_group(turn_api, selection=HYBRID)
    world.handlers["emotion"] = SAD_AND_LOST
    world.handlers["select"] = select("not-a-member")  # invalid twice: one repair, then the scorer
    body = await _turn(turn_api, conv["id"], "我好难过，也不知道该怎么办")
    assert world.calls.count("select") == 2
    sel = body["orchestration"]["selection"]
    assert (sel["path"], sel["llmAgreed"], sel["selectedAgentIds"]) == ("fallback", None, [gentle["id"]])
    assert _recorded(await _rows(engine, body["turnId"])) == {("hybrid", "fallback", CLOSE, None)}


async def test_llm_mode_asks_the_model_even_when_the_scorer_is_sure(turn_api: Api, world: World, engine: Any) -> None:
    conv, (gentle, _, _) = await make_group(turn_api, selection={"mode": "llm"})
    world.handlers["select"] = select(gentle["id"])
    body = await _turn(turn_api, conv["id"])
    assert world.calls.count("select") == 1
    sel = body["orchestration"]["selection"]
    assert (sel["mode"], sel["path"], sel["llmAgreed"], sel["hybridMargin"]) == ("llm", "llm", True, None)
    assert _recorded(await _rows(engine, body["turnId"])) == {("llm", "llm", CLEAR, True)}


async def test_a_mention_that_fills_the_turn_is_the_mention_path_without_a_margin(turn_api: Api, world: World,
                                                                                 engine: Any) -> None:  # fmt: skip
    conv, (_, planner, _) = await make_group(turn_api, selection={"mode": "llm"})
    body = await _turn(turn_api, conv["id"], "周衡你怎么看这个计划？")
    assert "select" not in world.calls  # in every mode: nothing is left to choose
    sel = body["orchestration"]["selection"]
    assert (sel["path"], sel["scorerMargin"], sel["selectedAgentIds"]) == ("mention", None, [planner["id"]])
    assert _recorded(await _rows(engine, body["turnId"])) == {("llm", "mention", None, None)}


async def test_direct_and_continue_turns_have_their_own_paths(turn_api: Api, world: World, engine: Any) -> None:
    agent = await turn_api.agent("莉娅")
    direct = (await turn_api.client.post("/v1/conversations", json={"kind": "direct", "agentIds": [agent["id"]]},
                                         headers=ALICE)).json()  # fmt: skip
    body = await _turn(turn_api, direct["id"], "你好呀")
    assert (body["orchestration"]["selection"]["path"], body["orchestration"]["selection"]["scorerMargin"]) == ("direct", None)
    assert _recorded(await _rows(engine, body["turnId"])) == {("hybrid", "direct", None, None)}

    conv, _ = await make_group(turn_api, selection={"mode": "llm"})
    world.handlers["select"] = select("not-a-member")
    await _turn(turn_api, conv["id"])
    before = world.calls.count("select")
    resp = await turn_api.client.post(f"/v1/conversations/{conv['id']}/continue", json={}, headers=ALICE)
    cont = resp.json()
    assert cont["status"] == "completed", cont.get("error")
    assert world.calls.count("select") == before  # a Continue never asks the selector, whatever the mode
    assert cont["orchestration"]["selection"]["path"] == "continue"
    assert {r.selection_path for r in await _rows(engine, cont["turnId"])} == {"continue"}


async def test_a_new_conversation_selects_in_hybrid_with_the_tuned_margin(turn_api: Api, world: World) -> None:
    conv, _ = await make_group(turn_api)
    assert conv["settings"]["selection"] == {"mode": "hybrid", "hybridMargin": DEFAULT_HYBRID_MARGIN}
    body = await _turn(turn_api, conv["id"])
    sel = body["orchestration"]["selection"]
    assert (sel["mode"], sel["hybridMargin"]) == ("hybrid", DEFAULT_HYBRID_MARGIN)
    assert ("select" in world.calls) == (sel["scorerMargin"] < DEFAULT_HYBRID_MARGIN)
    assert sel["path"] == ("fallback" if sel["scorerMargin"] < DEFAULT_HYBRID_MARGIN else "scorer")


async def test_the_selection_paths_query_counts_turns_agreement_and_outcomes(turn_api: Api, world: World) -> None:
    conv, (gentle, planner, _) = await make_group(turn_api, selection=HYBRID)
    await _turn(turn_api, conv["id"], "周衡你怎么看？")  # mention
    conv, (gentle, planner, _) = await make_group(turn_api, selection=HYBRID)
    world.handlers["emotion"] = SAD_AND_LOST
    world.handlers["select"] = select(planner["id"])
    await _turn(turn_api, conv["id"], "我好难过，也不知道该怎么办")  # llm, disagreeing
    conv, (gentle, planner, _) = await make_group(turn_api, selection=HYBRID)
    world.handlers["select"] = select(gentle["id"])
    await _turn(turn_api, conv["id"], "我好难过，也不知道该怎么办")  # llm, agreeing
    conv, _ = await make_group(turn_api, selection={"mode": "scorer"})
    world.handlers["actor"] = ModelTimeout("actor down")
    failed = await _turn(turn_api, conv["id"])  # scorer; its one reply dropped, the turn failed
    assert failed["status"] == "failed"
    resp = await turn_api.client.get("/v1/analytics/selection-paths", headers=ADMIN)
    assert resp.status_code == 200, resp.text
    rows = {(r["mode"], r["path"]): r for r in resp.json()}
    assert set(rows) == {("hybrid", "mention"), ("hybrid", "llm"), ("scorer", "scorer")}
    llm = rows[("hybrid", "llm")]
    assert (llm["turns"], llm["compared"], llm["agreed"], llm["agreementRate"]) == (2, 2, 1, 0.5)
    assert llm["meanMargin"] == pytest.approx(CLOSE) and (llm["repliesKept"], llm["keptRate"]) == (2, 1.0)
    scorer = rows[("scorer", "scorer")]
    assert (scorer["speakers"], scorer["repliesKept"], scorer["repliesDropped"], scorer["failedTurns"]) == (1, 0, 1, 1)
    assert rows[("hybrid", "mention")]["meanMargin"] is None and rows[("hybrid", "mention")]["share"] == 0.25


async def test_a_close_second_slot_leaves_the_clear_first_speaker_to_the_scorer_and_releases_it_at_once(
        turn_api: Api, world: World, engine: Any) -> None:  # fmt: skip
    """Lively, two replies, sad and lost: 莉娅 2.70 and 周衡 2.475 chosen, 小跳 0.93 left out (margin
    1.545). At ``hybridMargin`` 1.6 the second slot is close (周衡 vs 小跳) and the first is not (莉娅
    is 1.77 above 小跳): the model is asked for the second slot only, between those two, and 莉娅's
    reply goes out before it answers."""
    conv, (gentle, planner, joker) = await make_group(turn_api, selection={"mode": "hybrid", "hybridMargin": 1.6},
                                                     replyLimit=2, chattiness="lively")  # fmt: skip
    world.handlers["emotion"] = SAD_AND_LOST
    asked: list[str] = []

    async def slow_pick(req: Any) -> dict[str, Any]:
        asked.append("\n".join(m.content for m in req.messages))
        # far longer than the rest of the turn before a reply's first words: ``firstDelta`` counts
        # from the turn's start, so a pause of the whole process (once 1 s in a full CI run) must
        # not read as waiting for this answer
        await asyncio.sleep(2.5)
        return {"selectedAgentIds": [joker["id"]], "reason": "换个轻松的声音"}

    world.handlers["select"] = slow_pick
    resp = await turn_api.client.post(f"/v1/conversations/{conv['id']}/turns", json={"content": "我好难过，也不知道该怎么办"},
                                      headers={**ALICE, "accept": "text/event-stream"})  # fmt: skip
    events = [(line.split(":", 1)[1].strip(), None) for line in resp.text.splitlines() if line.startswith("event:")]
    data = [json.loads(line.split(":", 1)[1]) for line in resp.text.splitlines() if line.startswith("data:")]
    stream = [(name, body) for (name, _), body in zip(events, data, strict=True)]
    assert len(asked) == 1 and planner["id"] in asked[0] and joker["id"] in asked[0] and gentle["id"] not in asked[0]
    selection = next(i for i, (n, _) in enumerate(stream) if n == "turn.selection")
    timings = next(b for n, b in stream if n == "turn.completed")["orchestration"]["timings"]
    assert timings["firstDelta"] < timings["select"]  # 莉娅's words did not wait for the selector's answer
    sel = stream[selection][1]["selection"]
    assert sel["selectedAgentIds"] == [gentle["id"], joker["id"]]
    assert (sel["path"], sel["llmAgreed"], sel["scorerPick"]) == ("llm", False, [gentle["id"], planner["id"]])
    assert sel["selectedBy"] == {gentle["id"]: "fallback", joker["id"]: "llm"} and sel["decidedBy"] == "llm"
    done = next(b for n, b in stream if n == "turn.completed")
    assert [m["agentId"] for m in done["agentMessages"]] == [gentle["id"], joker["id"]]
    rows = await _rows(engine, done["turnId"])
    assert {r.decided_by for r in rows} == {"llm"}
