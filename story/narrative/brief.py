"""A compact text view of the narrative for the planning, settling and rebranch prompts."""

from __future__ import annotations

from story.narrative.types import Line, NarrativeSnapshot


def _line(name: str, line: Line) -> str:
    debts = "; ".join(line.unpaid_rewards) or "-"
    return (f"{name}: theme={line.theme!r} direction={line.direction!r} experience={line.experience!r} "
            f"cursor={line.cursor} unpaid_rewards={debts}")


def narrative_brief(n: NarrativeSnapshot) -> str:
    goals = "\n".join(
        f"- {g.id} [{g.serves}/{g.angle}{'/core' if g.core else ''}] p{g.priority} "
        f"{'DONE' if g.done else 'open'} needs={','.join(g.prerequisites) or '-'}: {g.gist}"
        + (f" (reward: {g.reward})" if g.reward else "")
        for g in n.cycle.pending
    ) or "(none)"
    recent = ", ".join(d or "-" for d in n.clock.recent_directions[-5:]) or "-"
    return (f"{_line('MAIN', n.main)}\n{_line('SUB', n.sub)}\nCycle {n.cycle.index} goals:\n{goals}\n"
            f"Completed goal ids: {', '.join(n.clock.completed_goals[-20:]) or '-'}\n"
            f"Recent explicit user pursuits (oldest first): {recent}\n"
            f"Emotion target: {n.emotion.label} {n.emotion.target}")
