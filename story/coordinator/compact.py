"""Deliberate degradation when a state would exceed ``maxStateBytes``.

Only *settled history* is compacted, in steps, each a little more forgetful: the ids of settled
and quarantined events, retired world ids, completed goal ids, recent directions, the emotion
trajectory, and the evidence quotes of goals already done. What is still needed to settle an
open event (its refs) or to adopt the pending reply is never touched. Forgetting old ids only
weakens duplicate detection for events far in the past; forgetting quotes of done goals only
shortens what the status report can show. If the state still does not fit, the save reports
``state_too_large`` (see ``halted``) instead of trying again every turn.
"""

from __future__ import annotations

import msgspec

from story.coordinator.envelope import StoryState

replace = msgspec.structs.replace

# (ids kept, trajectory points kept) per step
STEPS = ((32, 6), (8, 2), (0, 0))


def compact(state: StoryState, step: int) -> StoryState:
    keep, points = STEPS[min(step, len(STEPS) - 1)]

    def tail(xs: list) -> list:  # noqa: ANN001 - any list of ids
        return list(xs[-keep:]) if keep else []

    n, w = state.narrative, state.world
    clock = replace(n.clock, settled_event_ids=tail(n.clock.settled_event_ids),
                    completed_goals=tail(n.clock.completed_goals), recent_directions=tail(n.clock.recent_directions))
    pending = [replace(g, evidence="") if g.done else g for g in n.cycle.pending]
    emotion = replace(n.emotion, trajectory=list(n.emotion.trajectory[-points:]) if points else [])
    narrative = replace(n, clock=clock, cycle=replace(n.cycle, pending=pending), emotion=emotion)
    world = replace(w, retired_ids=tail(w.retired_ids))
    return replace(state, narrative=narrative, world=world, quarantined_ids=tail(state.quarantined_ids))


def halted(state: StoryState) -> StoryState:
    """The state saved when even the compacted one does not fit: the Story stops for this scope
    (no pending reply, so nothing is re-adopted and no model is called again) until an operator
    resets it. The unsettled events stay, for manual recovery."""
    c = compact(state, len(STEPS) - 1)
    return replace(c, status="state_too_large", pending_actor=None, world=replace(c.world, pending=None))
