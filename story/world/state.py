"""Creating, parsing and checking world snapshots.

The agent itself is a protected owner: a thread or seed owned by it would let hidden
mechanics puppet the character the user is talking to, so such entries are refused here,
wherever they come from (host, initializer or model proposal).
"""

from __future__ import annotations

from typing import Any

import msgspec

from story.world.rng import seed_state
from story.world.types import (
    Background, Foreground, Seed, Undercurrent, WorldPolicy, WorldSnapshot,
)


class WorldInvalid(ValueError):
    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def norm_name(name: str) -> str:
    return " ".join(name.casefold().split())


def is_protected(policy: WorldPolicy, owner: str) -> bool:
    return norm_name(owner) in {norm_name(p) for p in policy.protected_owners}


def world_problems(w: WorldSnapshot) -> list[str]:
    """Every structural rule a legal snapshot obeys; used after each mechanical step too."""
    p = w.policy
    problems: list[str] = []
    if len(w.backgrounds) > p.backgrounds_max:
        problems.append(f"backgrounds {len(w.backgrounds)} > max {p.backgrounds_max}")
    if len(w.undercurrents) > p.undercurrents_max:
        problems.append(f"undercurrents {len(w.undercurrents)} > max {p.undercurrents_max}")
    for u in w.undercurrents:
        if is_protected(p, u.owner):
            problems.append(f"undercurrent {u.id} is owned by protected {u.owner!r}")
        if not 1 <= u.stage <= 3:
            problems.append(f"undercurrent {u.id} has illegal stage {u.stage}")
    for s in w.seed_pool:
        if is_protected(p, s.owner):
            problems.append(f"seed {s.id} is owned by protected {s.owner!r}")
    ids = [w.foreground.id] + [b.id for b in w.backgrounds] + [u.id for u in w.undercurrents] + [s.id for s in w.seed_pool]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        problems.append(f"duplicate ids {dupes}")
    reused = sorted(set(ids) & set(w.retired_ids))
    if reused:
        problems.append(f"retired ids reused {reused}")
    nxt = w.pending_next_foreground
    if nxt is not None and nxt.id in ids:
        problems.append(f"next foreground {nxt.id!r} is already a live id")
    inj = [i.id for i in w.pending_injections]
    if len(set(inj)) != len(inj):
        problems.append("duplicate injection ids")
    d = w.pending_signal_demand
    if d is not None and not any(u.id == d.undercurrent_id and u.stage == 3 for u in w.undercurrents):
        problems.append(f"signal demand names {d.undercurrent_id!r}, not a stage-3 undercurrent")
    pool = {s.id for s in w.seed_pool}
    if any(q not in pool for q in w.seed_queue):
        problems.append("seed_queue names a seed not in seed_pool")
    if w.foreground.phase not in ("start", "develop", "end"):
        problems.append(f"illegal phase {w.foreground.phase}")
    return problems


def create_world_snapshot(
    foreground: Foreground,
    *,
    backgrounds: list[Background] | None = None,
    undercurrents: list[Undercurrent] | None = None,
    seeds: list[Seed] | None = None,
    policy: WorldPolicy | None = None,
    seed: int = 731,
    protected_owners: list[str] | None = None,
) -> WorldSnapshot:
    """A legal first snapshot; raises ``WorldInvalid`` rather than trimming anything."""
    pol = policy or WorldPolicy()
    if protected_owners:
        merged = list(dict.fromkeys([*pol.protected_owners, *protected_owners]))
        pol = msgspec.structs.replace(pol, protected_owners=merged)
    w = WorldSnapshot(
        foreground=foreground, policy=pol, rng_state=seed_state(seed, "world"),
        backgrounds=list(backgrounds or []), undercurrents=list(undercurrents or []),
        seed_pool=list(seeds or []), seed_queue=[s.id for s in seeds or []],
    )
    problems = world_problems(w)
    if problems:
        raise WorldInvalid(problems)
    return w


def parse_world_snapshot(data: bytes | str | dict[str, Any]) -> WorldSnapshot:
    if isinstance(data, dict):
        w = msgspec.convert(data, WorldSnapshot)
    else:
        w = msgspec.json.decode(data, type=WorldSnapshot)
    problems = world_problems(w)
    if problems:
        raise WorldInvalid(problems)
    return w
