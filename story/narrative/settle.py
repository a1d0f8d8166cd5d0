"""Settling one event on its accepted text: the program's half of ``NarrativeSettleEventTool``.

Every completed goal and every moved cursor must quote evidence that occurs in the event's
accepted prose (after normalising width, case, whitespace and punctuation) and is long enough
for what it claims (``story.narrative.evidence``); the check is done here in code, and a claim
without such evidence is rejected, never trusted. Line starvation counts settled events without a moved cursor.
"""

from __future__ import annotations

import math
from typing import Literal

import msgspec

from story.narrative.evidence import quote_problem
from story.narrative.types import Cycle, NarrativeSnapshot, Trial, Vad
from story.tools import bounds as b
from story.tools.common import Diagnostic

replace = msgspec.structs.replace
SETTLED_ID_WINDOW = 64
# Completed goal ids kept (newest last): enough for prerequisites and fresh ids of the next plans
# (the planner is shown the last 8); older ones only made a long roleplay's state grow.
COMPLETED_GOAL_WINDOW = 64


class CompletedClaim(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    goal_id: b.Id
    evidence: b.Quote


class ProgressClaim(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    line: Literal["main", "sub"]
    evidence: b.Quote
    note: b.Note


class EmotionObservation(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    valence: float
    arousal: float
    dominance: float


class SettleProposal(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    status: Literal["assessed", "unknown"]
    completed_goals: list[CompletedClaim]
    line_progress: list[ProgressClaim]
    emotion: EmotionObservation | None
    new_pursuit: b.Pursuit  # "" when no explicit new pursuit


COMPLETED_CLAIMS_MAX = 4


def settle_constraints(n: NarrativeSnapshot) -> b.Constraints:
    """Per request: completed goals name open goals (an ``enum``), one claim per line, emotion in range."""
    open_ids = [g.id for g in n.cycle.pending if not g.done]
    claims = ({"completed_goals": {"maxItems": min(COMPLETED_CLAIMS_MAX, len(open_ids))},
               "completed_goals[].goal_id": {"enum": open_ids}} if open_ids else {"completed_goals": {"maxItems": 0}})
    return b.merge(
        claims, b.at_most("line_progress", 2),
        {"emotion.valence": {"minimum": -1, "maximum": 1}, "emotion.arousal": {"minimum": 0, "maximum": 1},
         "emotion.dominance": {"minimum": 0, "maximum": 1}},
    )  # fmt: skip


class NextAction(msgspec.Struct, frozen=True):
    kind: Literal["plan-cycle", "rebranch"]
    scope: Literal["main", "sub"] | None = None
    direction: str | None = None


def first_claim_per_line(p: SettleProposal) -> SettleProposal:
    """One progress claim per line: later claims for a line already claimed are not counted.

    A schema cannot say "distinct lines" for a list of objects, so a schema-following model may
    claim a line twice; the rule is mechanical, so the first claim stands instead of a repair."""
    seen: set[str] = set()
    kept = [c for c in p.line_progress if not (c.line in seen or seen.add(c.line))]
    return msgspec.structs.replace(p, line_progress=kept) if len(kept) != len(p.line_progress) else p


def settle_problems(n: NarrativeSnapshot, p: SettleProposal) -> list[str]:
    open_ids = {g.id for g in n.cycle.pending if not g.done}
    problems = [f"goal {c.goal_id!r} is not an open goal" for c in p.completed_goals if c.goal_id not in open_ids]
    lines = [c.line for c in p.line_progress]
    if len(set(lines)) != len(lines):
        problems.append("at most one progress claim per line")
    e = p.emotion
    if e is not None and not (-1 <= e.valence <= 1 and 0 <= e.arousal <= 1 and 0 <= e.dominance <= 1):
        problems.append("emotion out of range (valence -1..1, arousal and dominance 0..1)")
    return problems


def evidence_in(prose: str, evidence: str, claimed: str = "") -> bool:
    return quote_problem(prose, evidence, claimed) is None


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def apply_settle(n: NarrativeSnapshot, event_id: str, prose: str, p: SettleProposal) -> tuple[NarrativeSnapshot, list[NextAction], list[Diagnostic]]:
    pol, diags = n.policy, []
    by_id = {g.id: g for g in n.cycle.pending}
    done = set(n.clock.completed_goals) | {g.id for g in n.cycle.pending if g.done}
    completed: dict[str, str] = {}
    for c in p.completed_goals:
        g = by_id[c.goal_id]
        if (problem := quote_problem(prose, c.evidence, g.gist)) is not None:
            diags.append(Diagnostic("claim_rejected", f"goal evidence: {problem}", {"goal_id": g.id}))
        elif not all(pr in done or pr in completed for pr in g.prerequisites):
            diags.append(Diagnostic("claim_rejected", "goal prerequisites incomplete", {"goal_id": g.id}))
        else:
            completed[g.id] = c.evidence.strip()
    moved: set[str] = set()
    for c in p.line_progress:
        line = n.main if c.line == "main" else n.sub
        if (problem := quote_problem(prose, c.evidence, line.direction)) is None:
            moved.add(c.line)
        else:
            diags.append(Diagnostic("claim_rejected", f"line progress evidence: {problem}", {"line": c.line}))
    lines = {}
    for name, line in (("main", n.main), ("sub", n.sub)):
        debts = [r for r in line.unpaid_rewards if not any(
            by_id[i].angle == "reward" and by_id[i].serves == name and by_id[i].reward == r for i in completed)]
        lines[name] = replace(line, unpaid_rewards=debts, cursor=line.cursor + (name in moved),
                              starve=0 if name in moved else line.starve + 1)
    pending = [replace(g, done=True, evidence=completed[g.id]) if g.id in completed else g for g in n.cycle.pending]
    cycle = replace(n.cycle, pending=pending, completed=n.cycle.completed + len(completed))
    emotion = n.emotion
    if p.emotion is not None:
        traj = [*emotion.trajectory, Vad(p.emotion.valence, p.emotion.arousal, p.emotion.dominance)]
        emotion = replace(emotion, trajectory=traj[-pol.recent_window:])
    clock = replace(
        n.clock, event_count=n.clock.event_count + 1,
        settled_event_ids=[*n.clock.settled_event_ids, event_id][-SETTLED_ID_WINDOW:],
        completed_goals=[*n.clock.completed_goals, *completed][-COMPLETED_GOAL_WINDOW:],
        recent_directions=[*n.clock.recent_directions, p.new_pursuit.strip()][-pol.recent_window:],
    )
    out = replace(n, main=lines["main"], sub=lines["sub"], cycle=cycle, emotion=emotion, clock=clock)
    out, promoted = _promotion(out)
    if promoted:
        diags.append(Diagnostic("cycle_advanced", "", {"cycle": out.cycle.index}))
    return out, _next_actions(out, diags), diags


def _promotion(n: NarrativeSnapshot) -> tuple[NarrativeSnapshot, bool]:
    """Threshold ceil(total×2/3) opens a trial; the trial's completion or 2 more events advance."""
    c, pol, count = n.cycle, n.policy, n.clock.event_count
    if c.trial is not None:
        goal = next((g for g in c.pending if g.id == c.trial.goal_id), None)
        if goal is None or goal.done or count - c.trial.started_event_count >= pol.promotion_wait_events:
            return replace(n, cycle=Cycle(index=c.index + 1, pending=c.pending, total=0, completed=0), need_plan=True), True
        return n, False
    if c.total > 0 and c.completed >= math.ceil(c.total * pol.promotion_ratio_num / pol.promotion_ratio_den):
        open_goals = sorted((g for g in c.pending if not g.done), key=lambda g: (not g.core, -g.priority))
        return replace(n, cycle=replace(c, trial=Trial(open_goals[0].id if open_goals else None, count))), False
    return n, False


def _next_actions(n: NarrativeSnapshot, diags: list[Diagnostic]) -> list[NextAction]:
    pol, actions = n.policy, []
    if n.need_plan:
        actions.append(NextAction("plan-cycle"))
    k = pol.branch_consecutive_events
    recent = n.clock.recent_directions[-k:]
    if len(recent) == k and recent[0] and len({_norm(d) for d in recent}) == 1 and _norm(recent[0]) != _norm(n.main.direction):
        actions.append(NextAction("rebranch", "main", recent[-1]))
    elif n.sub.starve >= pol.sub_replace_after_events:
        actions.append(NextAction("rebranch", "sub"))
    if n.main.starve >= pol.main_starve_diagnostic:
        diags.append(Diagnostic("main_line_starved", "diagnostic only; the user's pursuit is not changed",
                                {"starve": n.main.starve}))
    return actions
