"""Story material sizes, and the tools' last-resort bound on a material string.

The coordinator composes the material for a budget (``story.coordinator.material``): the
current input and the last turns always whole, the persona shortened. A tool still bounds what
a host hands it, at twice the budget, so a composed material never reaches the bound; a longer
string loses its middle, not its end: the head keeps who the character is, the tail keeps the
recent messages and the current input. Lengths are characters (a Chinese character is one).
"""

from __future__ import annotations

from story.tools.common import Diagnostic

# The action classification (prepare) and the world settlement (advance) are small answers on
# the actor's path; the plan cycle and the rebranch write the story ahead and see twice as much.
ACTION_BUDGET = 6_000
PLAN_BUDGET = 12_000
ACTION_LIMIT, PLAN_LIMIT = 2 * ACTION_BUDGET, 2 * PLAN_BUDGET
GAP = "\n[…]\n"


def bound_material(text: str, limit: int, tool: str) -> tuple[str, list[Diagnostic]]:
    """``text`` if it fits in ``limit`` characters, else its first quarter and its end with a
    gap mark between them, and a ``material_truncated`` diagnostic saying how much was kept."""
    if len(text) <= limit:
        return text, []
    head = limit // 4
    tail = max(0, limit - head - len(GAP))
    kept = head + tail
    note = Diagnostic("material_truncated", f"{tool}: kept the first {head} and the last {tail} of {len(text)} "
                      "characters of the material", {"kept": kept, "of": len(text), "limit": limit, "tool": tool})
    return text[:head] + GAP + (text[-tail:] if tail else ""), [note]


def bounded_setting(text: str) -> str:
    """The plan and rebranch setting within ``PLAN_LIMIT``. These tools keep no diagnostic of
    their own for it: the coordinator bounds its material first and says so (``turn_material``)."""
    return bound_material(text, PLAN_LIMIT, "narrative")[0]
