"""The deterministic core of a prepare: transition, phase clock, countdowns, dice, seeds, surfacing.

A pure function of (baseline snapshot, intent, user text): it consumes randomness only from
the RNG state stored in the baseline, so replaying it from the recorded baseline reproduces
the prepared turn exactly. That replay is how a saved prepared turn is verified on restore.
"""

from __future__ import annotations

from typing import Any

import msgspec

from story.tools.common import Diagnostic
from story.world.rng import SplitMix
from story.world.state import is_protected, world_problems
from story.world.types import (
    Background, Foreground, Injection, Intent, Phase, SignalDemand, Undercurrent, WorldSnapshot,
)

replace = msgspec.structs.replace


class DiceRoll(msgspec.Struct, frozen=True):
    undercurrent_id: str
    stage: int
    roll: int | None  # None: no roll (blocked)
    threshold: int
    outcome: str  # "advanced" | "held" | "forced" | "blocked"


class WorldEvent(msgspec.Struct, frozen=True):
    kind: str
    id: str
    detail: dict[str, Any] = {}


class Mechanics(msgspec.Struct, frozen=True):
    snapshot: WorldSnapshot
    intent: Intent
    flags: list[str]
    dice: list[DiceRoll]
    events: list[WorldEvent]
    surfacing: list[str]
    diagnostics: list[Diagnostic]


def fresh_injection_id(base: str, injections: list[Injection]) -> str:
    """``base`` unless a pending injection already uses it (a source id reused later)."""
    taken = {i.id for i in injections}
    k, out = 2, base
    while out in taken:
        out, k = f"{base}-{k}", k + 1
    return out


def phase_for(rounds: int, develop_max: int) -> Phase:
    if rounds == 0:
        return "start"
    return "develop" if rounds <= develop_max else "end"


def _transition(w: WorldSnapshot, intent: Intent, ev: list[WorldEvent], flags: list[str]) -> tuple[WorldSnapshot, Intent]:
    old = w.foreground
    if intent.kind == "cue":
        bg = next((b for b in w.backgrounds if b.id == intent.target_id), None)
        if bg is not None:
            fg = Foreground(bg.id, bg.title, bg.summary, participants=old.participants if intent.companion_follows else [])
            w = replace(w, foreground=fg, backgrounds=[b for b in w.backgrounds if b.id != bg.id])
        else:
            uc = next((u for u in w.undercurrents if u.id == intent.target_id and u.stage in (2, 3)), None)
            if uc is None:
                return w, Intent("normal")
            fg = Foreground(uc.id, uc.title, uc.clue, participants=old.participants if intent.companion_follows else [])
            demand = w.pending_signal_demand
            w = replace(w, foreground=fg, undercurrents=[u for u in w.undercurrents if u.id != uc.id],
                        pending_signal_demand=None if demand and demand.undercurrent_id == uc.id else demand)
    elif intent.kind == "signal":
        d = w.pending_signal_demand
        uc = next((u for u in w.undercurrents if d and u.id == d.undercurrent_id), None)
        if d is None or not d.delivered or d.undercurrent_id != intent.target_id or uc is None:
            return w, Intent("normal")
        fg = Foreground(uc.id, uc.title, d.invitation, participants=old.participants if intent.companion_follows else [])
        w = replace(w, foreground=fg, pending_signal_demand=None,
                    undercurrents=[u for u in w.undercurrents if u.id != uc.id])
        flags.append("signal_answered")
    else:
        return w, intent
    ev.append(WorldEvent("event_interrupted", old.id, {"phase": old.phase, "by": intent.kind}))
    ev.append(WorldEvent("event_started", w.foreground.id, {"from": intent.target_id or ""}))
    flags.append("transition")
    return w, intent


def _progress_phase(w: WorldSnapshot, ev: list[WorldEvent], flags: list[str]) -> WorldSnapshot:
    fg, dm = w.foreground, w.policy.develop_max
    if fg.rounds > dm + 1:  # the end has been played: hand over to a legal successor
        nxt = w.pending_next_foreground
        if nxt is None:
            flags.append("awaiting_successor")
            return replace(w, foreground=replace(fg, phase="end"))
        ev.append(WorldEvent("event_ended", fg.id, {}))
        ev.append(WorldEvent("event_started", nxt.id, {"from": nxt.source_id}))
        flags.append("successor_started")
        return replace(w, foreground=Foreground(nxt.id, nxt.title, nxt.summary, participants=fg.participants),
                       pending_next_foreground=None)
    return replace(w, foreground=replace(fg, phase=phase_for(fg.rounds, dm)))


def _countdowns(w: WorldSnapshot, took_over: bool, ev: list[WorldEvent], flags: list[str]) -> WorldSnapshot:
    kept: list[Background] = []
    injections = list(w.pending_injections)
    for b in w.backgrounds:
        b = replace(b, countdown=b.countdown - 1)
        if b.countdown > 0:
            kept.append(b)
            continue
        phase = w.foreground.phase
        if phase == "start":
            kept.append(replace(b, countdown=1))
            flags.append(f"background_delayed:{b.id}")
        elif phase == "end" and not took_over:
            took_over = True
            ev.append(WorldEvent("event_ended", w.foreground.id, {"taken_over_by": b.id}))
            ev.append(WorldEvent("event_started", b.id, {"from": b.id}))
            flags.append(f"background_took_over:{b.id}")
            w = replace(w, foreground=Foreground(b.id, b.title, b.summary, participants=w.foreground.participants))
        else:
            injections.append(Injection(fresh_injection_id(f"inj-{b.id}", injections), b.id, b.summary or b.title, "obstacle"))
            flags.append(f"background_obstructs:{b.id}")
    return replace(w, backgrounds=kept, pending_injections=injections)


def _dice(w: WorldSnapshot, rng: SplitMix, dice: list[DiceRoll], ev: list[WorldEvent]) -> WorldSnapshot:
    p, out = w.policy, []
    demand, injections = w.pending_signal_demand, list(w.pending_injections)
    for u in w.undercurrents:
        threshold = p.stage_thresholds[min(u.stage, len(p.stage_thresholds)) - 1]
        if u.stage == 3 and demand is not None and demand.undercurrent_id == u.id and not demand.delivered:
            dice.append(DiceRoll(u.id, u.stage, None, threshold, "blocked"))
            out.append(replace(u, stage_rounds=min(u.stage_rounds + 1, p.max_stage_rounds)))
            continue
        roll = rng.roll(100)
        forced = u.stage_rounds + 1 >= p.max_stage_rounds
        if roll < threshold and not forced:
            dice.append(DiceRoll(u.id, u.stage, roll, threshold, "held"))
            out.append(replace(u, stage_rounds=u.stage_rounds + 1))
            continue
        if u.stage == 2 and demand is not None:  # one invitation at a time
            dice.append(DiceRoll(u.id, u.stage, roll, threshold, "blocked"))
            out.append(replace(u, stage_rounds=min(u.stage_rounds + 1, p.max_stage_rounds)))
            continue
        dice.append(DiceRoll(u.id, u.stage, roll, threshold, "advanced" if roll >= threshold else "forced"))
        if u.stage == 3:
            injections.append(Injection(fresh_injection_id(f"inj-{u.id}", injections), u.id,
                                        u.invitation or u.clue or u.title, "offstage_result"))
            demand = None if demand and demand.undercurrent_id == u.id else demand
            ev.append(WorldEvent("undercurrent_surfaced", u.id, {}))
            continue
        nu = replace(u, stage=u.stage + 1, stage_rounds=0)
        if nu.stage == 3:
            demand = SignalDemand(u.id, u.invitation or u.clue or u.title, w.round)
        ev.append(WorldEvent("undercurrent_advanced", u.id, {"stage": nu.stage}))
        out.append(nu)
    return replace(w, undercurrents=out, pending_signal_demand=demand, pending_injections=injections)


def _seeds(w: WorldSnapshot, rng: SplitMix, ev: list[WorldEvent], diags: list[Diagnostic]) -> WorldSnapshot:
    p = w.policy
    if len(w.undercurrents) >= min(p.undercurrents_min_target, p.undercurrents_max):
        return w
    if w.round - w.last_seed_round < p.seed_interval_rounds and w.round > 0:
        return w
    pool = {s.id: s for s in w.seed_pool if not is_protected(p, s.owner)}
    queue = [q for q in w.seed_queue if q in pool]
    if not queue and pool:
        ids = sorted(pool)
        queue = [ids[rng.pick(len(ids))]]
    if not queue:
        diags.append(Diagnostic("undercurrent_below_target", "no seed available; nothing invented",
                                {"count": len(w.undercurrents), "target": p.undercurrents_min_target}))
        return w
    s = pool[queue[0]]
    uc = Undercurrent(s.id, s.owner, s.title, s.clue, s.invitation)
    ev.append(WorldEvent("seed_injected", s.id, {}))
    return replace(w, undercurrents=[*w.undercurrents, uc], last_seed_round=w.round,
                   seed_pool=[x for x in w.seed_pool if x.id != s.id],
                   seed_queue=[q for q in w.seed_queue if q != s.id])


def _surfacing(w: WorldSnapshot, rng: SplitMix) -> list[str]:
    demand_id = w.pending_signal_demand.undercurrent_id if w.pending_signal_demand else None
    cands = [u for u in w.undercurrents if u.clue and u.id != demand_id]
    keyed = sorted(((-u.stage, rng.next_u64(), u.id) for u in cands))
    return [k[2] for k in keyed[: w.policy.surface_budget]]


def run_mechanics(baseline: WorldSnapshot, intent: Intent, user_text: str) -> Mechanics:
    rng = SplitMix(baseline.rng_state)
    ev: list[WorldEvent] = []
    flags: list[str] = []
    dice: list[DiceRoll] = []
    diags: list[Diagnostic] = []
    w, intent = _transition(replace(baseline, pending=None), intent, ev, flags)
    if "transition" not in flags:
        w = _progress_phase(w, ev, flags)
    took_over = any(e.kind == "event_started" for e in ev)
    w = _countdowns(w, took_over, ev, flags)
    w = _dice(w, rng, dice, ev)
    w = _seeds(w, rng, ev, diags)
    surfacing = _surfacing(w, rng)
    w = replace(w, rng_state=rng.state)
    problems = world_problems(w)
    if problems:  # a bug, never a model's doing: refuse rather than save an illegal world
        raise AssertionError(f"mechanics produced an illegal world: {problems}")
    return Mechanics(w, intent, flags, dice, ev, surfacing, diags)
