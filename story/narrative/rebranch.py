"""Changing a line's direction without losing what happened: the program's half of rebranch.

``main`` keeps the facts and the debts (cursor, unpaid rewards, completed goals) and only
takes a new theme and direction; ``sub`` replaces the sub line alone and leaves main as is.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from story.narrative.types import Line, NarrativeSnapshot
from story.tools import bounds as b

replace = msgspec.structs.replace


class LineDraft(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    theme: b.Theme
    direction: b.Direction
    experience: b.Experience


class RebranchProposal(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    main: LineDraft | None
    sub: LineDraft
    continuity: b.Continuity


class MainRebranchProposal(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Scope ``main``: both lines are rewritten, so ``main`` cannot be left out."""

    main: LineDraft
    sub: LineDraft
    continuity: b.Continuity


class SubRebranchProposal(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Scope ``sub``: the schema itself keeps ``main`` null, so main cannot be rewritten by accident."""

    main: None
    sub: LineDraft
    continuity: b.Continuity


def rebranch_output(scope: Literal["main", "sub"]) -> type:
    return MainRebranchProposal if scope == "main" else SubRebranchProposal


def rebranch_problems(scope: Literal["main", "sub"], p: RebranchProposal | MainRebranchProposal | SubRebranchProposal) -> list[str]:
    problems = []
    if scope == "main" and p.main is None:
        problems.append("scope main needs a main line")
    if scope == "sub" and p.main is not None:
        problems.append("scope sub must leave main null")
    for name, d in (("main", p.main), ("sub", p.sub)):
        if d is not None and not (d.theme.strip() and d.direction.strip()):
            problems.append(f"{name} needs a theme and a direction")
    if not p.continuity.strip():
        problems.append("continuity note is required")
    return problems


def apply_rebranch(n: NarrativeSnapshot, scope: Literal["main", "sub"],
                   p: RebranchProposal | MainRebranchProposal | SubRebranchProposal, turn_id: str) -> NarrativeSnapshot:
    main = n.main
    if scope == "main" and p.main is not None:
        main = replace(main, theme=p.main.theme, direction=p.main.direction, experience=p.main.experience, starve=0)
        sub = replace(n.sub, theme=p.sub.theme, direction=p.sub.direction, experience=p.sub.experience)
        clock = replace(n.clock, recent_directions=[], rebranched_turn_id=turn_id)
    else:
        sub = Line(p.sub.theme, p.sub.direction, p.sub.experience, unpaid_rewards=list(n.sub.unpaid_rewards))
        clock = replace(n.clock, rebranched_turn_id=turn_id)
    return replace(n, main=main, sub=sub, clock=clock, need_plan=True)
