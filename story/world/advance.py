"""Applying an accepted turn to the world: the program's half of ``PovAdvanceWorldTool``.

The model may only propose content in writable fields (was the invitation delivered, which
offstage consequences were shown, new offstage matters, a successor event, choices). Clocks,
ids of existing things, capacities and mechanical stages are the program's alone, so every
proposal is checked here and anything outside those fields cannot even be expressed.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from story.tools import bounds as b
from story.tools.bounds import Clue, Id, Name, Summary, Title
from story.tools.fresh_ids import fresh_ids
from story.world.mechanics import fresh_injection_id
from story.world.state import is_protected, world_problems
from story.world.types import (
    Background, Choice, Injection, NextForeground, Seed, WorldSnapshot,
)

replace = msgspec.structs.replace
NEW_BACKGROUND_COUNTDOWN = 3


class ProposedBackground(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    id: Id
    title: Title
    summary: Summary
    kind: Literal["conflict", "progress"]


class ProposedResult(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    source_id: Id
    text: b.ResultText


class ProposedChoice(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    text: b.ChoiceText
    expect: b.Expect
    is_signal: bool


class ProposedNext(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    id: Id
    title: Title
    summary: Summary


class ProposedSeed(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    id: Id
    owner: Name
    title: Title
    clue: Clue
    invitation: Clue


class AdvanceProposal(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    invitation_delivered: bool
    shown_injection_ids: list[Id]
    offstage_results: list[ProposedResult]
    new_backgrounds: list[ProposedBackground]
    new_seeds: list[ProposedSeed]
    next_foreground: ProposedNext | None
    choices: list[ProposedChoice]


OFFSTAGE_RESULTS_MAX, NEW_SEEDS_MAX, CHOICES_MAX = 2, 2, 3


def offstage_sources(w: WorldSnapshot) -> list[str]:
    return [w.foreground.id, *(g.id for g in w.backgrounds), *(u.id for u in w.undercurrents)]


def advance_constraints(w: WorldSnapshot) -> b.Constraints:
    """Per request: shown consequences and offstage sources as ``enum``s of the current ids, the
    backgrounds' remaining capacity, and ``invitation_delivered`` only true when one is pending."""
    undelivered = w.pending_signal_demand is not None and not w.pending_signal_demand.delivered
    return b.merge(
        {} if undelivered else {"invitation_delivered": {"enum": [False]}},
        b.ids_from("shown_injection_ids", [i.id for i in w.pending_injections]),
        b.at_most("offstage_results", OFFSTAGE_RESULTS_MAX), b.one_of("offstage_results[].source_id", offstage_sources(w)),
        b.at_most("new_backgrounds", w.policy.backgrounds_max - len(w.backgrounds)),
        b.at_most("new_seeds", seed_room(w)), b.at_most("choices", CHOICES_MAX),
    )  # fmt: skip


# Seeds wait in the pool until the mechanics inject one (every ``seed_interval_rounds`` at most),
# while a proposal may add some every round: without a bound the pool, and the saved state, grow
# for as long as the roleplay lasts. New seeds beyond the room left are not taken.
SEED_POOL_MAX = 8


def seed_room(w: WorldSnapshot) -> int:
    return max(0, min(NEW_SEEDS_MAX, SEED_POOL_MAX - len(w.seed_pool)))


RETIRED_WINDOW = 64


def _live_ids(w: WorldSnapshot) -> list[str]:
    return [w.foreground.id, *(g.id for g in w.backgrounds), *(u.id for u in w.undercurrents)]


def _known_ids(w: WorldSnapshot) -> set[str]:
    ids = {*_live_ids(w), *w.retired_ids}
    if w.pending is not None:  # what this turn's mechanics just ended or surfaced is retired on commit
        ids |= set(_live_ids(w.pending.baseline))
    ids |= {s.id for s in w.seed_pool} | {i.id for i in w.pending_injections}
    if w.pending_next_foreground:
        ids.add(w.pending_next_foreground.id)
    return ids


def writer_problems(w: WorldSnapshot, nxt: NextForeground | None) -> list[str]:
    """The host's own successor must be a new event, like a model's (or the one already queued)."""
    if nxt is None or (w.pending_next_foreground is not None and nxt.id == w.pending_next_foreground.id):
        return []
    if not nxt.id.strip():
        return ["next_foreground needs an id"]
    return [f"next_foreground id {nxt.id!r} already exists"] if nxt.id in _known_ids(w) else []


def with_fresh_ids(w: WorldSnapshot, p: AdvanceProposal, reserved: set[str] | frozenset[str] = frozenset()) -> AdvanceProposal:
    """New backgrounds, seeds and the next foreground get ids free of every known one (``fresh_ids``).

    A new seed owned by a protected character is not taken (no schema can exclude a name, and
    the rest of the proposal is still good): the protection holds without a repair round trip.
    Seeds beyond the pool's room (``SEED_POOL_MAX``) are not taken either."""
    p = msgspec.structs.replace(p, new_seeds=[s for s in p.new_seeds if not is_protected(w.policy, s.owner)][:seed_room(w)])
    ids = iter(fresh_ids([*(g.id for g in p.new_backgrounds), *(s.id for s in p.new_seeds),
                          *([p.next_foreground.id] if p.next_foreground else [])], _known_ids(w) | set(reserved)))  # fmt: skip
    renamed = msgspec.structs.replace
    backgrounds = [renamed(g, id=next(ids)) for g in p.new_backgrounds]
    seeds = [renamed(s, id=next(ids)) for s in p.new_seeds]
    nxt = renamed(p.next_foreground, id=next(ids)) if p.next_foreground else None
    return renamed(p, new_backgrounds=backgrounds, new_seeds=seeds, next_foreground=nxt)


def proposal_problems(w: WorldSnapshot, p: AdvanceProposal, reserved: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """``reserved``: ids the host's writer output already takes (its own successor)."""
    known, problems = _known_ids(w) | set(reserved), []
    inj = {i.id for i in w.pending_injections}
    problems += [f"unknown injection id {i!r}" for i in p.shown_injection_ids if i not in inj]
    sources = set(offstage_sources(w))
    problems += [f"unknown offstage source {r.source_id!r}" for r in p.offstage_results if r.source_id not in sources]
    new_ids = [g.id for g in p.new_backgrounds] + [s.id for s in p.new_seeds]
    if p.next_foreground:
        new_ids.append(p.next_foreground.id)
    problems += [f"id {i!r} already exists" for i in new_ids if i in known]
    if len(set(new_ids)) != len(new_ids):
        problems.append("new ids must be distinct")
    if len(w.backgrounds) + len(p.new_backgrounds) > w.policy.backgrounds_max:
        problems.append(f"at most {w.policy.backgrounds_max} backgrounds in total")
    problems += [f"seed {s.id!r} is owned by a protected character" for s in p.new_seeds if is_protected(w.policy, s.owner)]
    if p.invitation_delivered and (w.pending_signal_demand is None or w.pending_signal_demand.delivered):
        problems.append("there is no undelivered invitation")
    return problems


def commit_turn(w: WorldSnapshot, turn_id: str, p: AdvanceProposal | None,
                writer_choices: list[Choice] | None, writer_next: NextForeground | None,
                shown_injection_texts: list[str]) -> WorldSnapshot:
    """The committed world: clocks moved by the program, content from the checked proposal."""
    baseline = w.pending.baseline if w.pending is not None else w
    base = replace(w, pending=None, round=w.round + 1, last_committed_turn_id=turn_id,
                   foreground=replace(w.foreground, rounds=w.foreground.rounds + 1))
    demand = base.pending_signal_demand
    if p is None:
        shown = {i.id for i in base.pending_injections if i.text in shown_injection_texts}
        delivered = bool(writer_choices and any(c.is_signal for c in writer_choices))
        injections = [i for i in base.pending_injections if i.id not in shown]
        backgrounds, seeds, nxt = base.backgrounds, base.seed_pool, writer_next or base.pending_next_foreground
        choices = list(writer_choices or [])
    else:
        delivered = p.invitation_delivered
        injections = [i for i in base.pending_injections if i.id not in set(p.shown_injection_ids)]
        for k, r in enumerate(p.offstage_results):
            injections.append(Injection(fresh_injection_id(f"res-{base.round}-{k}", injections), r.source_id, r.text))
        backgrounds = base.backgrounds + [
            Background(g.id, g.title, g.summary, g.kind, NEW_BACKGROUND_COUNTDOWN) for g in p.new_backgrounds]
        seeds = base.seed_pool + [Seed(s.id, s.owner, s.title, s.clue, s.invitation) for s in p.new_seeds]
        nxt = base.pending_next_foreground
        if p.next_foreground is not None and nxt is None:
            nxt = NextForeground(p.next_foreground.id, p.next_foreground.title, p.next_foreground.summary, base.foreground.id)
        if writer_next is not None:
            nxt = writer_next
        choices = list(writer_choices) if writer_choices else [Choice(c.text, c.expect, c.is_signal) for c in p.choices]
    if demand is not None and delivered and not demand.delivered:
        demand = replace(demand, delivered=True)
    out = replace(base, pending_signal_demand=demand, pending_injections=injections, backgrounds=backgrounds,
                  seed_pool=seeds, seed_queue=base.seed_queue + [s.id for s in seeds if s not in base.seed_pool],
                  pending_next_foreground=nxt, choices=choices)
    live = set(_live_ids(out)) | {s.id for s in out.seed_pool}
    gone = [i for i in _live_ids(baseline) if i not in live and i not in out.retired_ids]
    if gone:
        out = replace(out, retired_ids=[*out.retired_ids, *gone][-RETIRED_WINDOW:])
    problems = world_problems(out)
    if problems:
        raise ValueError(f"commit would produce an illegal world: {problems}")
    return out
