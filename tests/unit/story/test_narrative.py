import math

import pytest
from msgspec.structs import replace

from story.narrative.deal import deal_beat
from story.narrative.types import Vad
from story.tools.common import InvalidToolInput
from story.tools.deal_beat import DealInput, NarrativeDealBeatTool
from story.tools.narrative_tools import (
    NarrativePlanCycleTool, NarrativeRebranchTool, NarrativeSettleEventTool, PlanInput, RebranchInput, SettleInput,
)
from tests.unit.story.builders import cfg, ctx, goal, narrative
from tests.unit.story.fakes import ScriptedModel

PROSE = "Lia turns the key. 'This is the old archive mark,' she says. You may wait at the gate."


def planned(gid, serves="main", angle="reveal", prereq=None, reward=""):
    return {"id": gid, "serves": serves, "angle": angle, "gist": f"do {gid}", "reward": reward, "core": False,
            "priority": 3, "prerequisites": prereq or []}


def settle_json(completed=(), progress=(), pursuit="", status="assessed"):
    return {"status": status, "completed_goals": [{"goal_id": g, "evidence": e} for g, e in completed],
            "line_progress": [{"line": ln, "evidence": e, "note": ""} for ln, e in progress],
            "emotion": None, "new_pursuit": pursuit}


# --- plan -----------------------------------------------------------------------------------
async def test_plan_adds_five_to_seven_goals_with_a_sub_goal_and_keeps_unfinished_ones():
    n = replace(narrative([goal("old")]), need_plan=True)
    goals = [planned(f"g{i}") for i in range(4)] + [planned("g4", "sub"), planned("r1", angle="reward", prereq=["g0"])]
    m = ScriptedModel().enqueue("story.plan_cycle", {"goals": goals})
    r = await NarrativePlanCycleTool(cfg(m)).execute(PlanInput(ctx(), n, "setting"))
    assert r.outcome == "planned" and not r.snapshot.need_plan
    assert [g.id for g in r.snapshot.cycle.pending][0] == "old" and len(r.snapshot.cycle.pending) == 7


@pytest.mark.parametrize("goals", [
    [planned(f"g{i}") for i in range(3)] + [planned("s", "sub")],  # 4 goals
    [planned(f"g{i}") for i in range(7)] + [planned("s", "sub")],  # 8 goals
    [planned(f"g{i}") for i in range(5)],  # no sub goal
    [planned(f"g{i}") for i in range(4)] + [planned("s", "sub"), planned("r", angle="reward")],  # reward without setup
])
async def test_an_invalid_plan_is_repaired_once_then_need_plan_stays_true(goals):
    m = ScriptedModel().enqueue("story.plan_cycle", {"goals": goals}, {"goals": goals})
    r = await NarrativePlanCycleTool(cfg(m)).execute(PlanInput(ctx(), narrative(), ""))
    assert r.outcome == "failed" and r.snapshot.need_plan and len(m.history) == 2
    assert "Your previous reply was invalid" in m.history[1].messages[-1].content


async def test_bad_json_then_a_good_plan_succeeds_with_two_responses():
    good = {"goals": [planned(f"g{i}") for i in range(4)] + [planned("s", "sub")]}
    m = ScriptedModel().enqueue("story.plan_cycle", "{oops", good)
    r = await NarrativePlanCycleTool(cfg(m)).execute(PlanInput(ctx(), narrative(), ""))
    assert r.outcome == "planned" and r.usage.calls == 2


async def test_plan_runs_only_once_per_turn_and_only_when_needed():
    m = ScriptedModel()
    r = await NarrativePlanCycleTool(cfg(m)).execute(PlanInput(ctx(), narrative([goal("a")]), ""))
    assert r.outcome == "skipped" and m.history == []
    n = replace(narrative(), clock=replace(narrative().clock, planned_turn_id="t1"))
    assert (await NarrativePlanCycleTool(cfg(m)).execute(PlanInput(ctx("t1"), n, ""))).outcome == "skipped"


async def test_a_model_exception_is_a_failure_recorded_in_diagnostics():
    m = ScriptedModel().enqueue("story.plan_cycle", TimeoutError("upstream"))
    r = await NarrativePlanCycleTool(cfg(m)).execute(PlanInput(ctx(), narrative(), ""))
    assert r.outcome == "failed" and r.diagnostics[0].code == "model_failed" and r.snapshot.need_plan


# --- deal -----------------------------------------------------------------------------------
def test_deal_never_hands_out_a_reward_before_its_setup_is_done():
    n = narrative([goal("setup", priority=1), goal("prize", angle="reward", priority=5, prereq=["setup"])])
    _, packet = deal_beat(n, "start", "t1")
    assert packet.pending.id == "setup"


def test_deal_returns_null_when_no_goal_is_eligible():
    n = narrative([goal("a", prereq=["missing"])])
    _, packet = deal_beat(n, "develop", "t1")
    assert packet.pending is None


def test_deal_rotates_after_the_same_goal_was_dealt_three_turns():
    n = narrative([goal("a", priority=5), goal("b", priority=1)])
    dealt = []
    for t in range(5):
        n, packet = deal_beat(n, "develop", f"t{t}")
        dealt.append(packet.pending.id)
    assert dealt == ["a", "a", "a", "b", "a"]


def test_deal_is_idempotent_for_the_same_turn():
    n = narrative([goal("a"), goal("b")])
    n1, p1 = deal_beat(n, "start", "t1")
    n2, p2 = deal_beat(n1, "start", "t1")
    assert n1 == n2 and p1 == p2


def test_deal_prefers_the_starved_line_and_biases_towards_conflict_when_tension_is_low():
    n = narrative([goal("m", "main", "relationship"), goal("s", "sub", "conflict")])
    n = replace(n, sub=replace(n.sub, starve=2),
                emotion=replace(n.emotion, target=Vad(0, 0.8, 0.5), trajectory=[Vad(0, 0.2, 0.5)]))
    _, packet = deal_beat(n, "develop", "t1")
    assert packet.pending.id == "s" and packet.bias.prefer_background_kind == "conflict"


async def test_deal_tool_holds_while_an_event_is_unresolved():
    r = await NarrativeDealBeatTool().execute(DealInput(ctx(), narrative([goal("a")]), "start", hold=True))
    assert r.packet.pending is None and r.diagnostics[0].code == "deal_paused_unresolved_event"


# --- settle ---------------------------------------------------------------------------------
async def settle(n, *responses, prose=PROSE, event="ev1"):
    m = ScriptedModel().enqueue("story.settle", *responses)
    return await NarrativeSettleEventTool(cfg(m)).execute(SettleInput(ctx(), n, event, prose, ["I hand over the key"]))


async def test_a_goal_completes_only_with_evidence_quoted_verbatim_from_the_prose():
    n = narrative([goal("mark"), goal("enter")])
    r = await settle(n, settle_json(completed=[("mark", "This is the old archive mark"), ("enter", "You enter the archive")]))
    done = {g.id for g in r.snapshot.cycle.pending if g.done}
    assert r.outcome == "settled" and done == {"mark"}
    assert any(d.code == "claim_rejected" and d.data["goal_id"] == "enter" for d in r.diagnostics)


async def test_a_cursor_moves_only_with_evidence_and_otherwise_the_line_starves():
    r = await settle(narrative([goal("a")]), settle_json(progress=[("main", "Lia turns the key"), ("sub", "not in text")]))
    assert (r.snapshot.main.cursor, r.snapshot.main.starve) == (1, 0)
    assert (r.snapshot.sub.cursor, r.snapshot.sub.starve) == (0, 1)


async def test_unknown_is_not_no_progress_and_leaves_starve_untouched():
    n = narrative([goal("a")])
    r = await settle(n, settle_json(status="unknown"))
    assert r.outcome == "unknown" and r.snapshot == n


async def test_settling_twice_with_bad_output_is_unknown_after_two_responses():
    r = await settle(narrative([goal("a")]), "nope", settle_json(completed=[("ghost", "x")]))
    assert r.outcome == "unknown" and r.usage.calls == 2


async def test_the_same_event_is_settled_only_once():
    r = await settle(narrative([goal("a")]), settle_json())
    again = await NarrativeSettleEventTool(cfg(ScriptedModel())).execute(SettleInput(ctx(), r.snapshot, "ev1", PROSE, []))
    assert again.outcome == "duplicate"


async def test_main_starved_three_events_is_only_a_diagnostic():
    n = narrative([goal("a")])
    n = replace(n, main=replace(n.main, starve=2))
    r = await settle(n, settle_json())
    assert any(d.code == "main_line_starved" for d in r.diagnostics)
    assert all(a.kind != "rebranch" or a.scope != "main" for a in r.next_actions)


async def test_sub_line_without_progress_for_five_events_asks_for_a_sub_rebranch():
    n = narrative([goal("a")])
    r4 = await settle(replace(n, sub=replace(n.sub, starve=3)), settle_json())
    assert not any(a.kind == "rebranch" for a in r4.next_actions)
    r5 = await settle(replace(n, sub=replace(n.sub, starve=4)), settle_json())
    assert [(a.kind, a.scope) for a in r5.next_actions] == [("rebranch", "sub")]


async def test_three_consecutive_events_with_the_same_new_pursuit_ask_for_a_main_rebranch():
    n = narrative([goal("a")])
    actions = []
    for i, pursuit in enumerate(["find the lost caravan", "Find the lost  caravan", "find the lost caravan"]):
        r = await settle(n, settle_json(pursuit=pursuit), event=f"e{i}")
        n, actions = r.snapshot, r.next_actions
        if i == 1:
            assert actions == []
    assert [(a.kind, a.scope, a.direction) for a in actions] == [("rebranch", "main", "find the lost caravan")]


async def test_promotion_trial_opens_at_two_thirds_and_the_cycle_advances_after_two_more_events():
    goals = [goal(f"g{i}") for i in range(6)]
    n = narrative(goals)
    threshold = math.ceil(6 * 2 / 3)
    quote = "Lia turns the key"
    for i in range(threshold - 1):
        n = (await settle(n, settle_json(completed=[(f"g{i}", quote)]), event=f"e{i}")).snapshot
    assert n.cycle.trial is None
    n = (await settle(n, settle_json(completed=[(f"g{threshold - 1}", quote)]), event="e-t")).snapshot
    assert n.cycle.trial is not None and n.cycle.index == 0
    n = (await settle(n, settle_json(), event="x1")).snapshot
    assert n.cycle.index == 0
    r = await settle(n, settle_json(), event="x2")
    assert r.snapshot.cycle.index == 1 and r.snapshot.need_plan
    assert [a.kind for a in r.next_actions][0] == "plan-cycle"


# --- rebranch -------------------------------------------------------------------------------
async def test_main_rebranch_needs_a_direction():
    with pytest.raises(InvalidToolInput):
        await NarrativeRebranchTool(cfg(ScriptedModel())).execute(RebranchInput(ctx(), narrative(), "main"))


async def test_main_rebranch_keeps_facts_and_debts_and_notes_continuity():
    n = narrative([goal("a")])
    n = replace(n, main=replace(n.main, cursor=4, unpaid_rewards=["the archive opens"]))
    line = {"theme": "Lost caravan", "direction": "find the caravan", "experience": "pursuit"}
    m = ScriptedModel().enqueue("story.rebranch", {"main": line, "sub": line, "continuity": "the key came from the caravan"})
    r = await NarrativeRebranchTool(cfg(m)).execute(RebranchInput(ctx(), n, "main", direction="find the caravan"))
    assert r.snapshot.main.direction == "find the caravan" and r.snapshot.main.cursor == 4
    assert r.snapshot.main.unpaid_rewards == ["the archive opens"]
    assert r.diagnostics[-1].code == "narrative_rebranched" and "caravan" in r.diagnostics[-1].message


async def test_sub_rebranch_replaces_only_the_sub_line():
    n = narrative([goal("a")])
    line = {"theme": "New ally", "direction": "win the captain", "experience": "warmth"}
    m = ScriptedModel().enqueue("story.rebranch", {"main": None, "sub": line, "continuity": "the captain steps in"})
    r = await NarrativeRebranchTool(cfg(m)).execute(RebranchInput(ctx(), n, "sub"))
    assert r.snapshot.main == n.main and r.snapshot.sub.theme == "New ally" and r.snapshot.sub.starve == 0
