"""The three narrative tools that call a model: plan a cycle, settle an event, rebranch.

Each one keeps the snapshot unchanged on a model failure (after at most one repair) and says
so in its diagnostics: a failed plan keeps ``need_plan``; a failed settle is ``unknown``,
which is not "no progress" and so never touches starvation counters.

``options.policy`` (the seed's per-tool narrative policy) replaces the snapshot's policy for the
call: the tool plans, settles and rebranches under it, and every snapshot it returns (a skipped,
duplicate or failed call's too) carries it, so the host saves what the state was produced under.
Left out, the snapshot's own policy (``init_narrative_snapshot(policy=...)``) applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import msgspec

from story.narrative.brief import narrative_brief
from story.narrative.plan import PlanProposal, apply_plan, plan_constraints, plan_problems, with_fresh_ids
from story.narrative.rebranch import apply_rebranch, rebranch_output, rebranch_problems
from story.narrative.settle import (
    NextAction, SettleProposal, apply_settle, first_claim_per_line, settle_constraints, settle_problems,
)
from story.narrative.state import with_policy
from story.narrative.types import NarrativePolicy, NarrativeSnapshot
from story.ports import ChatMessage
from story.tools import prompts
from story.tools.common import (
    Diagnostic, InvalidToolInput, StoryContext, StoryModelConfig, StoryTool, ToolHooks, Usage,
)
from story.tools.material import bounded_setting
from story.tools.structured import call_structured


@dataclass(frozen=True)
class NarrativeToolOptions:
    """``policy`` replaces the snapshot's narrative policy for each call (see the module docstring);
    ``prompt`` replaces the task instructions; the output must still meet the schema."""

    policy: NarrativePolicy | None = None
    prompt: str | None = None


class PlanInput(msgspec.Struct, frozen=True):
    context: StoryContext
    snapshot: NarrativeSnapshot
    setting: str = ""


class SettleInput(msgspec.Struct, frozen=True):
    context: StoryContext
    snapshot: NarrativeSnapshot
    event_id: str
    prose: str
    user_actions: list[str]
    interrupted: bool = False


class RebranchInput(msgspec.Struct, frozen=True):
    context: StoryContext
    snapshot: NarrativeSnapshot
    scope: Literal["main", "sub"]
    setting: str = ""
    direction: str | None = None


class NarrativeResult(msgspec.Struct, frozen=True):
    snapshot: NarrativeSnapshot
    next_actions: list[NextAction] = []
    diagnostics: list[Diagnostic] = []
    usage: Usage = Usage()
    outcome: str = "ok"  # plan: planned|skipped|failed; settle: settled|unknown|duplicate; rebranch: rebranched|failed|duplicate


def _msgs(system: str, user: str, lang: str) -> list[ChatMessage]:
    return [ChatMessage("system", f"{system}\nWrite all text fields in {lang}. Answer in JSON."), ChatMessage("user", user)]


class _ModelTool(StoryTool):
    def __init__(self, model: StoryModelConfig, options: NarrativeToolOptions | None = None, hooks: ToolHooks | None = None) -> None:
        super().__init__(hooks)
        self.model, self.options = model, options or NarrativeToolOptions()

    def snapshot_of(self, n: NarrativeSnapshot) -> NarrativeSnapshot:
        return with_policy(n, self.options.policy)


class NarrativePlanCycleTool(_ModelTool):
    name = "narrative_plan_cycle"

    async def _run(self, inp: PlanInput) -> NarrativeResult:
        n, ctx = self.snapshot_of(inp.snapshot), inp.context
        if not n.need_plan or n.clock.planned_turn_id == ctx.turn_id:
            return NarrativeResult(n, diagnostics=[Diagnostic("plan_skipped")], outcome="skipped")
        p = n.policy
        system = self.options.prompt or prompts.PLAN.format(lo=p.plan_min_goals, hi=p.plan_max_goals, sub=p.plan_min_sub_goals)
        out = await call_structured(self.model, ctx, "story.plan_cycle",
                                    _msgs(system, f"{narrative_brief(n)}\n\nSetting:\n{bounded_setting(inp.setting)}", ctx.language),
                                    PlanProposal, lambda v: plan_problems(n, with_fresh_ids(n, v)),
                                    constraints=plan_constraints(n))  # fmt: skip
        if not out.ok:
            diags = [*out.diagnostics, Diagnostic("plan_failed", "need_plan stays true")]
            return NarrativeResult(n, [NextAction("plan-cycle")], diags, out.usage, "failed")
        plan = with_fresh_ids(n, out.value)
        return NarrativeResult(apply_plan(n, plan, ctx.turn_id), [], out.diagnostics, out.usage, "planned")


class NarrativeSettleEventTool(_ModelTool):
    name = "narrative_settle_event"

    async def _run(self, inp: SettleInput) -> NarrativeResult:
        n, ctx = self.snapshot_of(inp.snapshot), inp.context
        if inp.event_id in n.clock.settled_event_ids:
            return NarrativeResult(n, diagnostics=[Diagnostic("settle_duplicate", "", {"event_id": inp.event_id})], outcome="duplicate")
        if not inp.prose.strip():
            raise InvalidToolInput(self.name, "prose is empty")
        actions = "\n".join(f"- {a}" for a in inp.user_actions) or "(none)"
        user = (f"{narrative_brief(n)}\n\nEvent {inp.event_id} ({'interrupted' if inp.interrupted else 'ended'}).\n"
                f"User actions:\n{actions}\n\nAccepted text of the whole event:\n{inp.prose}")
        out = await call_structured(self.model, ctx, "story.settle", _msgs(self.options.prompt or prompts.SETTLE, user, ctx.language),
                                    SettleProposal, lambda v: settle_problems(n, first_claim_per_line(v)),
                                    constraints=settle_constraints(n))  # fmt: skip
        if not out.ok or out.value.status == "unknown":
            diags = [*out.diagnostics, Diagnostic("settle_unknown", "evidence kept; retry later", {"event_id": inp.event_id})]
            return NarrativeResult(n, [], diags, out.usage, "unknown")
        snap, actions_next, diags = apply_settle(n, inp.event_id, inp.prose, first_claim_per_line(out.value))
        return NarrativeResult(snap, actions_next, [*out.diagnostics, *diags], out.usage, "settled")


class NarrativeRebranchTool(_ModelTool):
    name = "narrative_rebranch"

    async def _run(self, inp: RebranchInput) -> NarrativeResult:
        n, ctx = self.snapshot_of(inp.snapshot), inp.context
        if inp.scope == "main" and not (inp.direction or "").strip():
            raise InvalidToolInput(self.name, "scope main requires a non-empty direction")
        if n.clock.rebranched_turn_id == ctx.turn_id:
            return NarrativeResult(n, diagnostics=[Diagnostic("rebranch_duplicate")], outcome="duplicate")
        task = prompts.REBRANCH_MAIN.format(direction=inp.direction) if inp.scope == "main" else prompts.REBRANCH_SUB
        user = f"{narrative_brief(n)}\n\nSetting:\n{bounded_setting(inp.setting)}"
        out = await call_structured(self.model, ctx, "story.rebranch", _msgs(self.options.prompt or task, user, ctx.language),
                                    rebranch_output(inp.scope), lambda v: rebranch_problems(inp.scope, v))
        if not out.ok:
            return NarrativeResult(n, [], [*out.diagnostics, Diagnostic("rebranch_failed")], out.usage, "failed")
        snap = apply_rebranch(n, inp.scope, out.value, ctx.turn_id)
        note = Diagnostic("narrative_rebranched", out.value.continuity, {"scope": inp.scope, "direction": inp.direction or ""})
        return NarrativeResult(snap, [NextAction("plan-cycle")], [*out.diagnostics, note], out.usage, "rebranched")
