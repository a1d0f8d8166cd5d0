"""Checking and applying a planned batch of goals: the program's half of ``NarrativePlanCycle``."""

from __future__ import annotations

from typing import Literal

import msgspec

from story.narrative.state import goal_problems
from story.narrative.types import Goal, NarrativeSnapshot

replace = msgspec.structs.replace


class PlannedGoal(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    id: str
    serves: Literal["main", "sub"]
    angle: Literal["character", "relationship", "conflict", "reveal", "reward"]
    gist: str
    reward: str
    core: bool
    priority: int
    prerequisites: list[str]


class PlanProposal(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    goals: list[PlannedGoal]


def _to_goal(p: PlannedGoal) -> Goal:
    return Goal(p.id, p.serves, p.angle, p.gist.strip(), p.reward.strip(), p.core, False, p.priority, list(p.prerequisites))


def plan_problems(n: NarrativeSnapshot, p: PlanProposal) -> list[str]:
    pol, problems = n.policy, []
    if not pol.plan_min_goals <= len(p.goals) <= pol.plan_max_goals:
        problems.append(f"plan {pol.plan_min_goals}-{pol.plan_max_goals} new goals, got {len(p.goals)}")
    if sum(g.serves == "sub" for g in p.goals) < pol.plan_min_sub_goals:
        problems.append(f"at least {pol.plan_min_sub_goals} goal must serve the sub line")
    taken = {g.id for g in n.cycle.pending} | set(n.clock.completed_goals)
    problems += [f"goal id {g.id!r} already used" for g in p.goals if g.id in taken]
    problems += [f"goal {g.id!r} has an empty gist" for g in p.goals if not g.gist.strip()]
    kept = [g for g in n.cycle.pending if not g.done]
    problems += goal_problems(kept + [_to_goal(g) for g in p.goals], set(n.clock.completed_goals))
    return problems


def apply_plan(n: NarrativeSnapshot, p: PlanProposal, turn_id: str) -> NarrativeSnapshot:
    """Unfinished goals stay; promised rewards of setup goals become the lines' unpaid debts."""
    new = [_to_goal(g) for g in p.goals]
    pending = [g for g in n.cycle.pending if not g.done] + new
    main_debts, sub_debts = list(n.main.unpaid_rewards), list(n.sub.unpaid_rewards)
    for g in new:
        if g.reward and g.angle != "reward":
            debts = main_debts if g.serves == "main" else sub_debts
            if g.reward not in debts:
                debts.append(g.reward)
    cycle = replace(n.cycle, pending=pending, total=len(pending), completed=0, trial=None)
    return replace(
        n, cycle=cycle, need_plan=False, clock=replace(n.clock, planned_turn_id=turn_id),
        main=replace(n.main, unpaid_rewards=main_debts), sub=replace(n.sub, unpaid_rewards=sub_debts),
    )
