"""The status report: what a host may show about a Story state without revealing hidden threads.

The report names the current scene, the lines and their cursors, the goals still open and the
quarantined events, i.e. what an operator needs to see whether the story moves. Undercurrents,
seeds, dice state and stage counters stay out: they are the hidden half of the world, and a
user who could read them would know the plot before it happens. Field names are camelCase on
the wire because hosts hand the report to HTTP clients as is.
"""

from __future__ import annotations

import msgspec

from story.coordinator.envelope import QuarantineRecord, StoryState


class LineReport(msgspec.Struct, frozen=True, rename="camel"):
    theme: str
    direction: str
    cursor: int
    starve: int
    unpaid_rewards: int


class GoalReport(msgspec.Struct, frozen=True, rename="camel"):
    id: str
    serves: str
    angle: str
    gist: str
    priority: int
    prerequisites: list[str]


class ForegroundReport(msgspec.Struct, frozen=True, rename="camel"):
    id: str
    title: str
    phase: str
    rounds: int


class QuarantineReport(msgspec.Struct, frozen=True, rename="camel"):
    event_id: str
    reason: str
    attempt_positions: list[int]
    message_ids: list[str]


class StatusReport(msgspec.Struct, frozen=True, rename="camel"):
    status: str
    round: int
    source_position: int
    foreground: ForegroundReport
    main: LineReport
    sub: LineReport
    pending_goals: list[GoalReport]
    completed_goals: list[str]
    need_plan: bool
    cycle: int
    unresolved_events: list[str]
    pending_message_id: str | None
    accepted_message_id: str | None
    quarantine: list[QuarantineReport]


def _line(line) -> LineReport:  # noqa: ANN001 - narrative Line
    return LineReport(line.theme, line.direction, line.cursor, line.starve, len(line.unpaid_rewards))


def status_report(state: StoryState, quarantine: list[QuarantineRecord] | None = None) -> StatusReport:
    """``quarantine``: the scope's records from the host's store (the state only holds ids)."""
    fg, n = state.world.foreground, state.narrative
    return StatusReport(
        status=state.status, round=state.world.round, source_position=state.source_position,
        foreground=ForegroundReport(fg.id, fg.title, fg.phase, fg.rounds),
        main=_line(n.main), sub=_line(n.sub),
        pending_goals=[GoalReport(g.id, g.serves, g.angle, g.gist, g.priority, list(g.prerequisites))
                       for g in n.cycle.pending if not g.done],
        completed_goals=list(n.clock.completed_goals), need_plan=n.need_plan, cycle=n.cycle.index,
        unresolved_events=[e.settle_key for e in state.events if e.closed],
        pending_message_id=state.pending_actor.message_id if state.pending_actor else None,
        accepted_message_id=state.accepted_message_id,
        quarantine=[QuarantineReport(q.event_id, q.reason, list(q.attempt_positions), [r.message_id for r in q.refs])
                    for q in (state.quarantine if quarantine is None else quarantine)],
    )  # fmt: skip
