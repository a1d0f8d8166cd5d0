"""Story material per budget: the current input and the last turns always fit, the persona is cut.

The models that classify an action, settle the world and plan the story each see the material
(character, definition, opening, recent messages, current input) composed for their budget, in
characters (a Chinese character counts one). The parts are filled in this order:

1. the current input, whole (it is bounded by the message limit);
2. a persona floor (a sixth of the budget), so the character stays recognisable;
3. the last ``FLOOR_MESSAGES`` messages, whole, or each trimmed to a fair share of what is left;
4. the persona up to a third of the budget;
5. older messages, newest first, each whole (at most ``HISTORY_MESSAGES`` in all);
6. the persona again, with what is left.

The definition and the opening share the persona's room fairly (a short opening stays whole).
The material's headings and the user's label are in the conversation's language (``Labels``):
Qwen2.5-0.5B, given English headings in a Chinese chat, wrote "Recent messages:" into its world.
Whatever is shortened is said in a diagnostic with the amounts: ``material_persona_shortened``
(``part``, ``kept``, ``of`` characters, ``budget``, ``material``) and ``material_recent_trimmed``
when even the last turns had to be trimmed. Only an input longer than the budget makes the
material longer than the budget; the tools' last-resort bound is twice the budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from story.auto_reply.text import is_chinese
from story.coordinator.recovery import HistoryMessage
from story.tools.common import Diagnostic
from story.tools.material import ACTION_BUDGET, ACTION_LIMIT, PLAN_BUDGET, PLAN_LIMIT, bound_material

if TYPE_CHECKING:
    from story.coordinator.initializer import PersonaSource

# Caps per part (the seed's source compiler): they hold with and without a budget.
DEFINITION_CHARS, OPENING_CHARS, HISTORY_MESSAGES, MESSAGE_CHARS = 12_000, 3_000, 18, 3_000
FLOOR_MESSAGES = 4
FLOOR_MESSAGE_MIN = 100  # each of the last turns keeps at least this much, even past the budget
PERSONA_FLOOR, PERSONA_SHARE = 6, 3  # fractions of the budget: 1/6 before the last turns, 1/3 before older ones
MARK = "…"


class Material(msgspec.Struct, frozen=True):
    text: str
    diagnostics: list[Diagnostic] = []


class TurnMaterial(msgspec.Struct, frozen=True):
    """One turn's material: ``action`` (prepare) and ``plan`` (plan cycle) with the current input,
    ``past_action`` (advance) and ``past_plan`` (the settle pass' rebranch) without it: adoption
    never sees the new input. Diagnostics are those of the material with the input; the past
    material is never shorter (it has one input less to fit)."""

    action: str
    plan: str
    past_action: str
    past_plan: str
    diagnostics: list[Diagnostic] = []

    def of(self, material: str) -> list[Diagnostic]:
        """The diagnostics of one budget's material (``action`` or ``plan``)."""
        return [d for d in self.diagnostics if d.data.get("material") == material]


class Labels(msgspec.Struct, frozen=True):
    """The material's headings and the user's speaker label, in one language (``user`` empty: the
    message's own name, as the host gave it)."""

    character: str
    definition: str
    opening: str
    recent: str
    current: str
    user: str
    colon: str


EN = Labels("Character", "Definition", "Opening", "Recent messages", "Current input", "", ": ")
ZH = Labels("角色", "设定", "开场", "最近消息", "本轮输入", "用户", "：")


def labels_for(language: str) -> Labels:
    return ZH if is_chinese(language) else EN


def fair_caps(lengths: list[int], room: int) -> list[int]:
    """Water-filling: all whole if they fit, else the short ones whole and the long ones cut to
    one common length, so that the sum stays within ``room``."""
    if sum(lengths) <= room:
        return list(lengths)
    out, left, n = [0] * len(lengths), max(0, room), len(lengths)
    for rank, i in enumerate(sorted(range(n), key=lengths.__getitem__)):
        out[i] = min(lengths[i], left // (n - rank))
        left -= out[i]
    return out


def cut(text: str, k: int) -> str:
    """``text`` in at most ``k`` characters, a cut one ending with the mark."""
    if len(text) <= k:
        return text
    return text[: k - 1] + MARK if k > 0 else ""


def kept_chars(length: int, k: int) -> int:
    return length if length <= k else max(0, k - 1)


def render(name: str, definition: str, opening: str, lines: list[str], current_input: str, words: Labels = EN) -> str:
    w, c = words, words.colon
    return (f"{w.character}{c}{name}\n{w.definition}{c.rstrip()}\n{definition}\n\n{w.opening}{c.rstrip()}\n{opening}\n\n"
            f"{w.recent}{c.rstrip()}\n" + "\n".join(lines) + (f"\n\n{w.current}{c}{current_input}" if current_input else ""))


def compose_material(persona: PersonaSource, history: list[HistoryMessage], current_input: str,
                     budget: int | None = None, material: str = "init", language: str = "en") -> Material:
    """The material in ``budget`` characters (None: the caps per part only), labelled in ``language``."""
    words = labels_for(language)
    recent = [m for m in history if not m.deleted][-HISTORY_MESSAGES:]
    labels = [f"{(m.role == 'user' and words.user) or m.name or m.role}{words.colon}" for m in recent]
    contents = [m.content[:MESSAGE_CHARS] for m in recent]
    full = {"definition": persona.definition, "opening": persona.opening}
    parts = [persona.definition[:DEFINITION_CHARS], persona.opening[:OPENING_CHARS]]
    msg_caps, first, persona_caps = [len(c) for c in contents], 0, [len(p) for p in parts]
    diags: list[Diagnostic] = []
    if budget is not None:
        left = budget - len(render(persona.name, "", "", [], current_input, words))
        need = sum(persona_caps)
        p_floor = min(need, budget // PERSONA_FLOOR, max(0, left))
        left -= p_floor
        n_floor = min(FLOOR_MESSAGES, len(recent))
        floor = list(range(len(recent) - n_floor, len(recent)))
        overhead = sum(len(labels[i]) + 1 for i in floor)
        lengths = [msg_caps[i] for i in floor]
        caps = fair_caps(lengths, max(left - overhead, sum(min(x, FLOOR_MESSAGE_MIN) for x in lengths)))
        for i, c in zip(floor, caps):
            msg_caps[i] = c
        if caps != lengths:
            diags.append(Diagnostic("material_recent_trimmed", f"the last {n_floor} messages were trimmed to fit the "
                                    f"{material} material ({budget} characters)",
                                    {"kept": sum(kept_chars(n, c) for n, c in zip(lengths, caps)), "of": sum(lengths),
                                     "budget": budget, "material": material}))  # fmt: skip
        left = max(0, left - overhead - sum(caps))
        p_more = min(need - p_floor, max(0, budget // PERSONA_SHARE - p_floor), left)
        left -= p_more
        first = len(recent) - n_floor
        while first > 0 and len(labels[first - 1]) + msg_caps[first - 1] + 1 <= left:
            first -= 1
            left -= len(labels[first]) + msg_caps[first] + 1
        persona_caps = fair_caps(persona_caps, min(need, p_floor + p_more + left))
    for (part, text), shown, k in zip(full.items(), parts, persona_caps):
        kept = kept_chars(len(shown), k)
        if kept < len(text):
            room = f"the {material} material ({budget} characters)" if budget is not None else "the part's cap"
            diags.append(Diagnostic("material_persona_shortened", f"{part}: {kept} of {len(text)} characters kept "
                                    f"for {room}", {"part": part, "kept": kept, "of": len(text), "budget": budget,
                                                    "material": material}))  # fmt: skip
    lines = [f"{labels[i]}{cut(contents[i], msg_caps[i])}" for i in range(first, len(recent))]
    text = render(persona.name, cut(parts[0], persona_caps[0]), cut(parts[1], persona_caps[1]), lines, current_input, words)
    return Material(text, diags)


def bounded(m: Material, limit: int, material: str) -> Material:
    """The tools' last-resort bound, applied here so its diagnostic is recorded with the turn's."""
    text, notes = bound_material(m.text, limit, material)
    notes = [msgspec.structs.replace(d, data={**d.data, "material": material}) for d in notes]
    return Material(text, [*m.diagnostics, *notes])


def turn_material(persona: PersonaSource, history: list[HistoryMessage], current_input: str,
                  language: str = "en") -> TurnMaterial:  # fmt: skip
    def both(text: str) -> tuple[Material, Material]:
        action = compose_material(persona, history, text, ACTION_BUDGET, "action", language)
        plan = compose_material(persona, history, text, PLAN_BUDGET, "plan", language)
        return bounded(action, ACTION_LIMIT, "action"), bounded(plan, PLAN_LIMIT, "plan")

    action, plan = both(current_input)
    past_action, past_plan = both("") if current_input else (action, plan)
    return TurnMaterial(action.text, plan.text, past_action.text, past_plan.text, [*action.diagnostics, *plan.diagnostics])
