"""Creating and parsing narrative snapshots, and the goal-graph rules shared by plan and deal."""

from __future__ import annotations

from typing import Any

import msgspec

from story.narrative.types import Goal, Line, NarrativePolicy, NarrativeSnapshot


class NarrativeInvalid(ValueError):
    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def init_narrative_snapshot(main: Line, sub: Line, policy: NarrativePolicy | None = None) -> NarrativeSnapshot:
    """A fresh narrative always needs a plan: no goals are invented before a planner runs.
    Raises ``NarrativeInvalid`` for a policy no plan could meet (see ``policy_problems``)."""
    pol = policy or NarrativePolicy()
    problems = policy_problems(pol)
    if problems:
        raise NarrativeInvalid(problems)
    return NarrativeSnapshot(main=main, sub=sub, policy=pol, need_plan=True)


def policy_problems(p: NarrativePolicy) -> list[str]:
    """Counts a plan, a deal and a settle can work with: a plan size range that is not empty, room
    for the sub goals, and thresholds and windows of at least one."""
    problems = [f"{name} {getattr(p, name)} < 1" for name in (
        "plan_min_goals", "deal_every_turns", "promotion_ratio_den", "promotion_wait_events",
        "branch_consecutive_events", "sub_replace_after_events", "main_starve_diagnostic", "recent_window",
    ) if getattr(p, name) < 1]  # fmt: skip
    if p.plan_min_goals > p.plan_max_goals:
        problems.append(f"plan_min_goals {p.plan_min_goals} > plan_max_goals {p.plan_max_goals}")
    if not 0 <= p.plan_min_sub_goals <= p.plan_max_goals:
        problems.append(f"plan_min_sub_goals {p.plan_min_sub_goals} outside 0..plan_max_goals")
    if p.promotion_ratio_num < 0 or p.promotion_ratio_num > p.promotion_ratio_den:
        problems.append(f"promotion ratio {p.promotion_ratio_num}/{p.promotion_ratio_den} outside 0..1")
    return problems


def with_policy(n: NarrativeSnapshot, policy: NarrativePolicy | None) -> NarrativeSnapshot:
    """``n`` under ``policy`` (a narrative tool's ``options.policy``); ``n`` itself when None."""
    return n if policy is None or policy == n.policy else msgspec.structs.replace(n, policy=policy)


def goal_problems(goals: list[Goal], done_ids: set[str]) -> list[str]:
    """Ids unique, prerequisites known and acyclic, every reward depends on a setup goal."""
    problems: list[str] = []
    by_id: dict[str, Goal] = {}
    for g in goals:
        if g.id in by_id:
            problems.append(f"duplicate goal id {g.id!r}")
        by_id[g.id] = g
    for g in goals:
        for p in g.prerequisites:
            if p not in by_id and p not in done_ids:
                problems.append(f"goal {g.id!r} depends on unknown goal {p!r}")
        if g.angle == "reward":
            setups = [p for p in g.prerequisites if (p in by_id and by_id[p].angle != "reward") or p in done_ids]
            if not setups:
                problems.append(f"reward goal {g.id!r} must depend on a setup goal")
        if not 1 <= g.priority <= 5:
            problems.append(f"goal {g.id!r} priority {g.priority} outside 1..5")
    state: dict[str, int] = {}

    def visit(gid: str) -> bool:
        if state.get(gid) == 1:
            return True
        if state.get(gid) == 2 or gid not in by_id:
            return False
        state[gid] = 1
        cyclic = any(visit(p) for p in by_id[gid].prerequisites)
        state[gid] = 2
        return cyclic

    if any(visit(g.id) for g in goals):
        problems.append("goal prerequisites form a cycle")
    return problems


def parse_narrative_snapshot(data: bytes | str | dict[str, Any]) -> NarrativeSnapshot:
    """A saved narrative snapshot (JSON text or its dict), checked as strictly as a world one:
    ``msgspec`` errors for a wrong shape, ``NarrativeInvalid`` for a policy no plan could meet or
    a goal graph with duplicate or unknown ids, a cycle or a reward without its setup."""
    n = msgspec.convert(data, NarrativeSnapshot) if isinstance(data, dict) else msgspec.json.decode(data, type=NarrativeSnapshot)
    problems = policy_problems(n.policy) + goal_problems(n.cycle.pending, set(n.clock.completed_goals))
    if problems:
        raise NarrativeInvalid(problems)
    return n
