"""A narrative tool's ``options.policy`` is the policy it runs with: it replaces the snapshot's for
the call (the schema's bounds, the checks, dealing, settling) and the returned snapshot carries it."""

from __future__ import annotations

from msgspec.structs import replace

from story.narrative.types import NarrativePolicy
from story.tools.deal_beat import DealInput, NarrativeDealBeatTool, NarrativeDealOptions
from story.tools.narrative_tools import (
    NarrativePlanCycleTool, NarrativeRebranchTool, NarrativeSettleEventTool, NarrativeToolOptions, PlanInput,
    RebranchInput, SettleInput,
)
from tests.unit.story.builders import cfg, ctx, goal, narrative
from tests.unit.story.fakes import ScriptedModel

SMALL = NarrativePolicy(plan_min_goals=2, plan_max_goals=3, plan_min_sub_goals=1)
PROSE = "Lia turns the key. 'This is the old archive mark,' she says."


def planned(gid, serves="main"):
    return {"id": gid, "serves": serves, "angle": "reveal", "gist": f"do {gid}", "reward": "", "core": False,
            "priority": 3, "prerequisites": []}


def plan_of(count: int) -> dict:
    return {"goals": [planned(f"g{i}") for i in range(count - 1)] + [planned("s", "sub")]}


async def plan(policy: NarrativePolicy | None, *answers):
    m = ScriptedModel().enqueue("story.plan_cycle", *answers)
    tool = NarrativePlanCycleTool(cfg(m), NarrativeToolOptions(policy=policy))
    return m, await tool.execute(PlanInput(ctx(), narrative(), "setting"))


async def test_the_plan_policy_from_options_sets_the_schema_bounds_and_the_prompt():
    m, r = await plan(SMALL, plan_of(3))
    goals = m.history[0].response_schema.schema["properties"]["goals"]
    assert (goals["minItems"], goals["maxItems"]) == (2, 3)
    assert "Add 2-3 NEW goals" in m.history[0].messages[0].content
    assert r.outcome == "planned" and len(r.snapshot.cycle.pending) == 3 and r.snapshot.policy == SMALL


async def test_the_plan_policy_from_options_replaces_the_snapshots_in_validation():
    _, default = await plan(None, plan_of(5))
    assert default.outcome == "planned" and default.snapshot.policy == NarrativePolicy()
    m, small = await plan(SMALL, plan_of(5), plan_of(5))  # five goals: right by default, too many here
    assert small.outcome == "failed" and small.snapshot.need_plan and len(m.history) == 2
    assert "plan 2-3 new goals, got 5" in m.history[1].messages[-1].content


async def test_the_deal_policy_from_options_changes_the_rotation():
    async def dealt(options):
        tool, n, out = NarrativeDealBeatTool(options), narrative([goal("a", priority=5), goal("b", priority=1)]), []
        for t in range(5):
            r = await tool.execute(DealInput(ctx(f"t{t}"), n, "develop"))
            n = r.snapshot
            out.append(r.packet.pending.id)
        return out, n

    assert (await dealt(None))[0] == ["a", "a", "a", "b", "a"]
    every_turn, n = await dealt(NarrativeDealOptions(NarrativePolicy(deal_every_turns=1)))
    assert every_turn == ["a", "b", "a", "b", "a"] and n.policy.deal_every_turns == 1


async def test_the_deal_policy_from_options_can_switch_the_emotion_guide_off():
    r = await NarrativeDealBeatTool(NarrativeDealOptions(NarrativePolicy(emotion_enabled=False))).execute(
        DealInput(ctx(), narrative([goal("a")]), "start"))
    assert r.packet.emotion_guide.enabled is False


async def test_the_settle_policy_from_options_sets_when_the_sub_line_is_replaced():
    n = narrative([goal("a")])
    n = replace(n, sub=replace(n.sub, starve=1))
    answer = {"status": "assessed", "completed_goals": [], "line_progress": [], "emotion": None, "new_pursuit": ""}

    async def settle(options):
        m = ScriptedModel().enqueue("story.settle", answer)
        return await NarrativeSettleEventTool(cfg(m), options).execute(SettleInput(ctx(), n, "ev1", PROSE, ["I wait"]))

    assert (await settle(None)).next_actions == []
    quick = await settle(NarrativeToolOptions(policy=NarrativePolicy(sub_replace_after_events=2)))
    assert [(a.kind, a.scope) for a in quick.next_actions] == [("rebranch", "sub")]


async def test_rebranch_takes_policy_and_prompt_from_options_and_a_skipped_call_still_carries_the_policy():
    m = ScriptedModel().enqueue("story.rebranch", {"main": None, "continuity": "the captain steps in",
                                                   "sub": {"theme": "New ally", "direction": "win the captain",
                                                           "experience": "warmth"}})
    options = NarrativeToolOptions(policy=SMALL, prompt="Replace the sub line, politely.")
    r = await NarrativeRebranchTool(cfg(m), options).execute(RebranchInput(ctx(), narrative([goal("a")]), "sub"))
    assert r.outcome == "rebranched" and r.snapshot.policy == SMALL
    assert m.history[0].messages[0].content.startswith("Replace the sub line, politely.")
    skipped = await NarrativePlanCycleTool(cfg(ScriptedModel()), options).execute(
        PlanInput(ctx(), narrative([goal("a")]), ""))
    assert skipped.outcome == "skipped" and skipped.snapshot.policy == SMALL
