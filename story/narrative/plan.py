"""Checking and applying a planned batch of goals: the program's half of ``NarrativePlanCycleTool``."""

from __future__ import annotations

from typing import Literal

import msgspec

from story.narrative.state import goal_problems
from story.narrative.types import Goal, NarrativeSnapshot
from story.tools import bounds as b
from story.tools.fresh_ids import fresh_ids

replace = msgspec.structs.replace


class PlannedGoal(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    id: b.Id
    serves: Literal["main", "sub"]
    angle: Literal["character", "relationship", "conflict", "reveal", "reward"]
    gist: b.Gist
    reward: b.Reward
    core: bool
    priority: int
    prerequisites: list[b.Id]


class PlanProposal(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    goals: list[PlannedGoal]


ANGLES = ["character", "relationship", "conflict", "reveal", "reward"]
PREREQUISITES_MAX = 3


def setup_goal_ids(n: NarrativeSnapshot) -> list[str]:
    """Goals a new goal may depend on: open setup goals of the cycle and goals already completed."""
    open_setups = [g.id for g in n.cycle.pending if not g.done and g.angle != "reward"]
    return list(dict.fromkeys([*open_setups, *n.clock.completed_goals[-8:]]))


def plan_constraints(n: NarrativeSnapshot) -> b.Constraints:
    """Per request: the policy's goal count, priorities 1-5, prerequisites as an ``enum`` of goals that
    exist (so they can neither be unknown nor form a cycle), and no reward goal while nothing could
    be its setup."""
    pol, setups = n.policy, setup_goal_ids(n)
    return b.merge(
        b.at_most("goals", pol.plan_max_goals, least=pol.plan_min_goals),
        {"goals[].priority": {"minimum": 1, "maximum": 5}},
        {} if setups else {"goals[].angle": {"enum": [a for a in ANGLES if a != "reward"]}},
        b.ids_from("goals[].prerequisites", setups, PREREQUISITES_MAX),
    )  # fmt: skip


def _to_goal(p: PlannedGoal) -> Goal:
    return Goal(p.id, p.serves, p.angle, p.gist.strip(), p.reward.strip(), p.core, False, p.priority, list(p.prerequisites))


def with_fresh_ids(n: NarrativeSnapshot, p: PlanProposal) -> PlanProposal:
    """New goal ids free of every goal id in use (``fresh_ids``); prerequisites name only existing
    goals (their ``enum``), so renaming a new goal breaks no reference."""
    taken = {g.id for g in n.cycle.pending} | set(n.clock.completed_goals)
    ids = iter(fresh_ids([g.id for g in p.goals], taken))
    return msgspec.structs.replace(p, goals=[msgspec.structs.replace(g, id=next(ids)) for g in p.goals])


def plan_problems(n: NarrativeSnapshot, p: PlanProposal) -> list[str]:
    pol, problems = n.policy, []
    if not pol.plan_min_goals <= len(p.goals) <= pol.plan_max_goals:
        problems.append(f"plan {pol.plan_min_goals}-{pol.plan_max_goals} new goals, got {len(p.goals)}")
    if sum(g.serves == "sub" for g in p.goals) < pol.plan_min_sub_goals:
        problems.append(f"at least {pol.plan_min_sub_goals} goal must serve the sub line")
    taken = {g.id for g in n.cycle.pending} | set(n.clock.completed_goals)
    problems += [f"goal id {g.id!r} already used" for g in p.goals if g.id in taken]
    problems += [f"goal {g.id!r} has an empty gist" for g in p.goals if not g.gist.strip()]
    gists = [" ".join(g.gist.split()) for g in p.goals if g.gist.strip()]
    problems += [f"goals must differ: the gist {gist!r} is given {gists.count(gist)} times"
                 for gist in dict.fromkeys(gists) if gists.count(gist) > 1]  # fmt: skip
    kept = [g for g in n.cycle.pending if not g.done]
    problems += goal_problems(kept + [_to_goal(g) for g in p.goals], set(n.clock.completed_goals))
    return problems


# A line owes at most this many rewards; the oldest unpaid promise is forgotten first, so a long
# roleplay whose rewards never land does not grow its state (or its prompts) without bound.
UNPAID_REWARDS_MAX = 8


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
        main=replace(n.main, unpaid_rewards=main_debts[-UNPAID_REWARDS_MAX:]),
        sub=replace(n.sub, unpaid_rewards=sub_debts[-UNPAID_REWARDS_MAX:]),
    )
