"""World snapshot shapes: what happens on stage, what waits offstage, and the mechanics' state.

Everything the dice and clocks need (policy, RNG state, counters) lives in the snapshot, so
the same snapshot and the same action always give the same prepared turn.
"""

from __future__ import annotations

from typing import Literal

import msgspec

Phase = Literal["start", "develop", "end"]
BackgroundKind = Literal["conflict", "progress"]
IntentKind = Literal["normal", "cue", "signal"]


class WorldPolicy(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    develop_max: int = 2
    backgrounds_max: int = 3
    undercurrents_max: int = 5
    undercurrents_min_target: int = 2
    max_stage_rounds: int = 6
    stage_thresholds: list[int] = msgspec.field(default_factory=lambda: [60, 70, 80])  # d100 roll >= threshold advances stage 1, 2, 3
    surface_budget: int = 2
    seed_interval_rounds: int = 2
    protected_owners: list[str] = []


class Foreground(msgspec.Struct, frozen=True):
    id: str
    title: str
    summary: str = ""
    phase: Phase = "start"
    rounds: int = 0  # accepted rounds of this event; the phase is derived from it
    participants: list[str] = []


class Background(msgspec.Struct, frozen=True):
    id: str
    title: str
    summary: str = ""
    kind: BackgroundKind = "progress"
    countdown: int = 3


class Undercurrent(msgspec.Struct, frozen=True):
    id: str
    owner: str
    title: str
    clue: str = ""
    invitation: str = ""
    stage: int = 1  # 1 signs, 2 conditions, 3 invitation, 4 surfaced (leaves the list)
    stage_rounds: int = 0


class Seed(msgspec.Struct, frozen=True):
    id: str
    owner: str
    title: str
    clue: str = ""
    invitation: str = ""


class SignalDemand(msgspec.Struct, frozen=True):
    undercurrent_id: str
    invitation: str
    since_round: int
    delivered: bool = False


class Injection(msgspec.Struct, frozen=True):
    id: str
    source_id: str
    text: str
    kind: Literal["obstacle", "offstage_result"] = "offstage_result"


class NextForeground(msgspec.Struct, frozen=True):
    id: str
    title: str
    summary: str = ""
    source_id: str = ""


class Choice(msgspec.Struct, frozen=True):
    text: str
    expect: str = ""
    is_signal: bool = False


class Intent(msgspec.Struct, frozen=True):
    kind: IntentKind = "normal"
    target_id: str | None = None
    companion_follows: bool | None = None


class PendingTurn(msgspec.Struct, frozen=True):
    """The prepared-but-unaccepted turn: its baseline lets a restore replay, never re-roll."""

    turn_id: str
    action_key: str
    intent: Intent
    user_text: str
    baseline: "WorldSnapshot"
    bias: BackgroundKind | None = None


class WorldSnapshot(msgspec.Struct, frozen=True):
    foreground: Foreground
    policy: WorldPolicy = WorldPolicy()
    rng_state: int = 0
    round: int = 0
    backgrounds: list[Background] = []
    undercurrents: list[Undercurrent] = []
    seed_pool: list[Seed] = []
    seed_queue: list[str] = []
    pending_signal_demand: SignalDemand | None = None
    pending_injections: list[Injection] = []
    pending_next_foreground: NextForeground | None = None
    choices: list[Choice] = []
    last_seed_round: int = 0
    last_committed_turn_id: str | None = None
    pending: PendingTurn | None = None
    # ids of events and threads that left the world (newest last, bounded): never reused, so a
    # later event cannot pass as an already settled one
    retired_ids: list[str] = []
