"""Dealing one goal per turn: the pure half of ``NarrativeDealBeatTool``.

Only goals whose prerequisites are complete can be dealt, so a reward is never handed out
before its setup happened. The same goal may be dealt again until done, but after
``deal_every_turns`` consecutive deals another eligible goal is forced in (rotation).
"""

from __future__ import annotations

from typing import Literal

import msgspec

from story.narrative.types import Dealt, Goal, NarrativeSnapshot, Vad

replace = msgspec.structs.replace
TENSION_GAP = 0.15
BEATS = {"start": "set up", "develop": "build", "end": "land"}


class DealtGoal(msgspec.Struct, frozen=True):
    id: str
    serves: str
    angle: str
    gist: str
    reward: str
    fresh: bool


class EmotionGuide(msgspec.Struct, frozen=True):
    enabled: bool
    valence: float
    arousal: float
    dominance: float
    label: str
    beat: str


class Bias(msgspec.Struct, frozen=True):
    prefer_background_kind: Literal["conflict", "progress"] | None = None


class BeatPacket(msgspec.Struct, frozen=True):
    pending: DealtGoal | None
    emotion_guide: EmotionGuide
    main_direction: str
    sub_direction: str
    bias: Bias


def observed(n: NarrativeSnapshot) -> Vad:
    return n.emotion.trajectory[-1] if n.emotion.trajectory else n.emotion.target


def tension_gap(n: NarrativeSnapshot) -> float:
    return n.emotion.target.arousal - observed(n).arousal


def eligible_goals(n: NarrativeSnapshot) -> list[Goal]:
    done = set(n.clock.completed_goals) | {g.id for g in n.cycle.pending if g.done}
    out = []
    for g in n.cycle.pending:
        if g.done or not all(p in done for p in g.prerequisites):
            continue
        if g.angle == "reward" and not g.prerequisites:
            continue
        out.append(g)
    return out


def _score(n: NarrativeSnapshot, g: Goal) -> int:
    line = n.main if g.serves == "main" else n.sub
    s = g.priority * 10 + (2 if g.core else 0) + line.starve * 3
    if n.cycle.trial is not None and n.cycle.trial.goal_id == g.id:
        s += 8
    if g.angle == "reward" and g.reward and g.reward in line.unpaid_rewards:
        s += 4
    gap = tension_gap(n)
    if n.policy.emotion_enabled:
        if gap > TENSION_GAP and g.angle in ("conflict", "reveal"):
            s += 4
        elif gap < -TENSION_GAP and g.angle in ("relationship", "character", "reward"):
            s += 4
    return s


def _packet(n: NarrativeSnapshot, goal: Goal | None, fresh: bool, phase: str) -> BeatPacket:
    t, gap = n.emotion.target, tension_gap(n)
    kind = "conflict" if gap > TENSION_GAP else "progress" if gap < -TENSION_GAP else None
    pending = None if goal is None else DealtGoal(goal.id, goal.serves, goal.angle, goal.gist, goal.reward, fresh)
    guide = EmotionGuide(n.policy.emotion_enabled, t.valence, t.arousal, t.dominance, n.emotion.label, BEATS.get(phase, "build"))
    return BeatPacket(pending, guide, n.main.direction, n.sub.direction, Bias(kind))


def deal_beat(n: NarrativeSnapshot, phase: str, turn_id: str, hold: bool = False) -> tuple[NarrativeSnapshot, BeatPacket]:
    """Same ``turn_id`` → the same packet and no counter moves (idempotent per turn)."""
    prev = n.clock.dealt_this_turn
    if prev is not None and prev.turn_id == turn_id:
        goal = next((g for g in n.cycle.pending if g.id == prev.goal_id), None)
        return n, _packet(n, goal, prev.fresh, phase)
    if hold:
        return n, _packet(n, None, False, phase)
    cands = eligible_goals(n)
    last = prev.goal_id if prev else None
    streak = n.clock.deal_streak
    if last is not None and streak >= n.policy.deal_every_turns and len(cands) > 1:
        cands = [g for g in cands if g.id != last]
        streak = 0
    if not cands:
        clock = replace(n.clock, dealt_this_turn=Dealt(turn_id, None, False), deal_streak=0)
        return replace(n, clock=clock), _packet(n, None, False, phase)
    order = {g.id: i for i, g in enumerate(n.cycle.pending)}
    best = max(cands, key=lambda g: (_score(n, g), -order[g.id]))
    fresh = best.id != last
    streak = 1 if fresh else streak + 1
    clock = replace(n.clock, dealt_this_turn=Dealt(turn_id, best.id, fresh), deal_streak=streak)
    out = replace(n, clock=clock)
    return out, _packet(out, best, fresh, phase)
