"""``PovAdvanceWorldTool``: settle the world on the writer output the host actually accepted.

Outcomes: ``committed`` (a new snapshot was computed; not a database write), ``duplicate``
(this turn was already committed) and ``pending`` (no reliable proposal: the prepared state
is kept as is and the same turn is retried later, never treated as "nothing changed").
"""

from __future__ import annotations

from typing import Literal

import msgspec

from story.ports import ChatMessage
from story.tools import bounds as b
from story.tools.common import (
    Diagnostic, InvalidToolInput, StoryContext, StoryModelConfig, StoryTool, ToolHooks, Usage,
)
from story.tools.material import ACTION_LIMIT, bound_material
from story.tools.structured import call_structured
from story.world.advance import (
    CHOICES_MAX, NEW_SEEDS_MAX, OFFSTAGE_RESULTS_MAX, AdvanceProposal, advance_constraints, commit_turn,
    proposal_problems, with_fresh_ids, writer_problems,
)
from story.world.mechanics import WorldEvent
from story.world.stage import PreparedMismatch, StoryPreparedTurn, restore_prepared
from story.world.types import Choice, NextForeground, WorldSnapshot


class WriterOutput(msgspec.Struct, frozen=True):
    prose: str
    choices: list[Choice] | None = None
    next_foreground: NextForeground | None = None


class AdvanceInput(msgspec.Struct, frozen=True):
    context: StoryContext
    prepared: StoryPreparedTurn
    writer: WriterOutput
    world_context: str = ""


class AdvanceResult(msgspec.Struct, frozen=True):
    outcome: Literal["committed", "duplicate", "pending"]
    snapshot: WorldSnapshot
    events: list[WorldEvent] = []
    diagnostics: list[Diagnostic] = []
    usage: Usage = Usage()


def _messages(prep: StoryPreparedTurn, prose: str, lang: str, world_context: str) -> list[ChatMessage]:
    w = prep.snapshot
    inj = "\n".join(f"- {i.id}: {i.text}" for i in w.pending_injections) or "(none)"
    bgs = "\n".join(f"- {b.id}: {b.title} ({b.kind}, countdown {b.countdown})" for b in w.backgrounds) or "(none)"
    ucs = "\n".join(f"- {u.id} [{u.owner}]: {u.title}" for u in w.undercurrents) or "(none)"
    demand = w.pending_signal_demand
    system = (
        "You settle a role-play world after an accepted reply. Report only what the accepted text shows. "
        "invitation_delivered: true only if the pending invitation visibly reached the user. "
        "shown_injection_ids: pending consequences the text showed. offstage_results: at most "
        f"{OFFSTAGE_RESULTS_MAX} new offstage consequences of listed sources ({b.RESULT_CHARS} characters each). "
        f"new_backgrounds (at most {max(0, w.policy.backgrounds_max - len(w.backgrounds))})/new_seeds (at most "
        f"{NEW_SEEDS_MAX}): only matters consistent with the text, with new short ids (at most {b.ID_CHARS} characters); "
        f"never owned by protected characters ({', '.join(w.policy.protected_owners) or 'none'}). "
        "next_foreground: a legal successor event if the current one is ending, else null. "
        f"choices: at most {CHOICES_MAX} options for the user ({b.CHOICE_CHARS} characters). Titles at most "
        f"{b.TITLE_CHARS} characters, summaries {b.SUMMARY_CHARS}, clues and invitations {b.CLUE_CHARS}. "
        "Leave a list empty when the text shows nothing for it. "
        f"Write texts in {lang}. Answer in JSON."
    )
    user = (
        f"Current event: {w.foreground.id}: {w.foreground.title} (phase {w.foreground.phase})\n"
        f"User action: {prep.user_text}\nFlags: {', '.join(prep.flags) or '-'}\n"
        f"Pending invitation: {demand.invitation if demand and not demand.delivered else '(none)'}\n"
        f"Pending consequences:\n{inj}\nBackgrounds:\n{bgs}\nHidden threads:\n{ucs}\n"
        f"Story material:\n{world_context}\n\nAccepted text:\n{prose}"
    )
    return [ChatMessage("system", system), ChatMessage("user", user)]


class PovAdvanceWorldTool(StoryTool[AdvanceInput, AdvanceResult]):
    name = "pov_advance_world"

    def __init__(self, model: StoryModelConfig | None = None, hooks: ToolHooks | None = None) -> None:
        super().__init__(hooks)
        self.model = model

    async def _run(self, inp: AdvanceInput) -> AdvanceResult:
        ctx, prep = inp.context, inp.prepared
        w = prep.snapshot
        if w.pending is None:
            if w.last_committed_turn_id == ctx.turn_id:
                return AdvanceResult("duplicate", w, diagnostics=[Diagnostic("advance_duplicate")])
            raise InvalidToolInput(self.name, "prepared snapshot has no pending turn")
        if ctx.turn_id != prep.turn_id or ctx.turn_id != w.pending.turn_id:
            raise InvalidToolInput(self.name, f"context turn {ctx.turn_id!r} does not match prepared {prep.turn_id!r}")
        problems = writer_problems(w, inp.writer.next_foreground)
        if problems:
            raise InvalidToolInput(self.name, "; ".join(problems))
        try:
            restore_prepared(w)
        except PreparedMismatch as exc:
            raise InvalidToolInput(self.name, str(exc)) from exc
        nxt = inp.writer.next_foreground
        reserved = {nxt.id} if nxt is not None else set()
        proposal, usage, diags = None, Usage(), []
        if self.model is not None:
            material, diags = bound_material(inp.world_context, ACTION_LIMIT, self.name)
            out = await call_structured(
                self.model, ctx, "story.advance", _messages(prep, inp.writer.prose, ctx.language, material),
                AdvanceProposal, lambda p: proposal_problems(w, with_fresh_ids(w, p, reserved), reserved),
                constraints=advance_constraints(w),
            )
            usage, diags = out.usage, [*diags, *out.diagnostics]
            if not out.ok:
                diags.append(Diagnostic("advance_pending", "no reliable world proposal; prepared state kept"))
                return AdvanceResult("pending", w, diagnostics=diags, usage=usage)
            proposal = with_fresh_ids(w, out.value, reserved)
        new = commit_turn(w, ctx.turn_id, proposal, inp.writer.choices, inp.writer.next_foreground, prep.stage.offstage)
        events = [WorldEvent("turn_committed", ctx.turn_id, {"round": new.round})]
        return AdvanceResult("committed", new, events, diags, usage)
