"""Narrative snapshot shapes: why the story moves (lines, goals, emotion) and where it stands.

Goal completion and line progress are separate records: a goal can be done without a line
moving and the other way round, and each needs its own evidence from accepted text.
"""

from __future__ import annotations

from typing import Literal

import msgspec

Serves = Literal["main", "sub"]
Angle = Literal["character", "relationship", "conflict", "reveal", "reward"]


class NarrativePolicy(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    deal_every_turns: int = 3
    plan_min_goals: int = 5
    plan_max_goals: int = 7
    plan_min_sub_goals: int = 1
    promotion_ratio_num: int = 2
    promotion_ratio_den: int = 3
    promotion_wait_events: int = 2
    branch_consecutive_events: int = 3
    sub_replace_after_events: int = 5
    main_starve_diagnostic: int = 3
    emotion_enabled: bool = True
    recent_window: int = 12


class Line(msgspec.Struct, frozen=True):
    theme: str
    direction: str
    experience: str = ""
    unpaid_rewards: list[str] = []
    cursor: int = 0
    starve: int = 0


class Goal(msgspec.Struct, frozen=True):
    id: str
    serves: Serves
    angle: Angle
    gist: str
    reward: str = ""
    core: bool = False
    done: bool = False
    priority: int = 3  # 1 (low) .. 5 (high)
    prerequisites: list[str] = []
    evidence: str = ""


class Vad(msgspec.Struct, frozen=True):
    valence: float = 0.0  # -1 bad .. 1 good
    arousal: float = 0.3  # 0 calm .. 1 tense
    dominance: float = 0.5  # 0 none .. 1 the POV side holds the initiative


class EmotionState(msgspec.Struct, frozen=True):
    target: Vad = Vad()
    label: str = "curious"
    trajectory: list[Vad] = []


class Trial(msgspec.Struct, frozen=True):
    goal_id: str | None
    started_event_count: int


class Cycle(msgspec.Struct, frozen=True):
    index: int = 0
    pending: list[Goal] = []
    total: int = 0  # goals planned in this cycle
    completed: int = 0  # of those, completed
    trial: Trial | None = None


class Dealt(msgspec.Struct, frozen=True):
    turn_id: str
    goal_id: str | None
    fresh: bool


class Clock(msgspec.Struct, frozen=True):
    settled_event_ids: list[str] = []
    completed_goals: list[str] = []
    recent_directions: list[str] = []  # "" when a settled event shows no explicit new pursuit
    dealt_this_turn: Dealt | None = None
    deal_streak: int = 0
    event_count: int = 0
    planned_turn_id: str | None = None
    rebranched_turn_id: str | None = None


class NarrativeSnapshot(msgspec.Struct, frozen=True):
    main: Line
    sub: Line
    policy: NarrativePolicy = NarrativePolicy()
    cycle: Cycle = Cycle()
    emotion: EmotionState = EmotionState()
    clock: Clock = Clock()
    need_plan: bool = True
