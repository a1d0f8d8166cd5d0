"""Step 3 of a turn: who replies. The scheduling library decides (including whether the model
selector is asked at all: ``selection.mode``, ``plan_selection``); this step runs the selector when
the plan says so; ``speculative_ids`` turns the fallback scorer's early pick into the actors the
pipeline starts while the decision is still open."""

from __future__ import annotations

from typing import Any

import msgspec

from app.turns.context import TurnContext
from app.turns.stages import StageRun, model_configured, struct_stage
from scheduling import (
    AgentProfile, GroupSpeakingContext, SelectionDecision, SelectionOutcome, SelectionPlan, SpeakerSelection, UserEmotion, UserIntent,
    build_speaking_context, decide_direct, decide_speakers, llm_selection_needed, plan_selection, selection_constraints,
    selection_model_request, selection_outcome, validate_selection,
)  # fmt: skip
from scheduling.selection.weights import ScoringWeights


class Selection(msgspec.Struct, kw_only=True):
    """What step 3 knows before the selector answers."""

    context: GroupSpeakingContext
    mentions: list[str]
    open: bool  # the mentions do not fill the turn (``llm_selection_needed``): someone is still to choose
    plan: SelectionPlan  # the mode's call: ask the model or not, and the scorer's own pick and margin
    scorer: SelectionDecision  # the decision without a model choice (the turn's, when the model gives none)

    @property
    def selector_needed(self) -> bool:
        return self.plan.ask_model


def speculative_ids(pick: SelectionDecision, started: set[str], extra: int = 0) -> list[str]:
    """The scorer's decision ``pick`` (no LLM), plus the ``extra`` next-ranked candidates (a wider
    bet: more hits, more cancelled calls)."""
    chosen = list(pick.selected_agent_ids)
    ranked = [c.agent_id for c in sorted(pick.candidates, key=lambda c: c.rank) if c.agent_id not in chosen]
    return [a for a in chosen + ranked[:max(0, extra)] if a not in started]


def prepare_selection(ctx: TurnContext, intent: UserIntent, emotion: UserEmotion, mentions: list[str],
                      weights: ScoringWeights, window: int) -> Selection:  # fmt: skip
    info, cfg = ctx.info, ctx.config
    context = build_speaking_context(info.agents, ctx.stats, info.recent, emotion, window=window,
                                     current_user_seq=info.user_message_seq, presence=info.presence)  # fmt: skip
    needed = not ctx.direct and not info.continuation and cfg.reply_order == "natural" and llm_selection_needed(
        intent, emotion, mentions, reply_limit=cfg.reply_limit,
        candidate_count=len(ctx.candidates()),
        chattiness=cfg.chattiness,
    )  # fmt: skip
    scorer = decide(ctx, context, intent, emotion, mentions, weights, None)
    plan = plan_selection(cfg.selection.mode, scorer, llm_needed=needed, hybrid_margin=cfg.selection.hybrid_margin)
    return Selection(context=context, mentions=mentions, open=needed, plan=plan, scorer=scorer)


def decide(ctx: TurnContext, context: GroupSpeakingContext, intent: UserIntent, emotion: UserEmotion,
           mentions: list[str], weights: ScoringWeights, llm_choice: SpeakerSelection | None,
           settled: list[str] | None = None) -> SelectionDecision:  # fmt: skip
    """``settled``: a ``hybrid`` close call's clear scorer picks (``SelectionPlan.settled``), who
    speak first whatever ``llm_choice`` says."""
    cfg = ctx.config
    decision = decide_speakers(
        agents=ctx.info.agents, context=context, intent=intent, mentions=mentions, weights=weights,
        llm_selection=llm_choice, reply_limit=cfg.reply_limit, chattiness=cfg.chattiness, emotion=emotion,
        muted=() if ctx.direct else ctx.agents.muted, reply_order="natural" if ctx.direct else cfg.reply_order,
        recent_speakers=[m.agent_id for m in ctx.info.recent if m.role == "agent" and m.agent_id],
        resting=ctx.resting, settled=settled or (),
    )  # fmt: skip
    return decide_direct(decision) if ctx.direct else decision


async def run_selector(model: Any, ctx: TurnContext, sel: Selection, intent: UserIntent) -> StageRun[SpeakerSelection | None]:
    if not sel.selector_needed:
        return StageRun(stage="select", value=None, source="skipped", ms=0.0)
    cfg = ctx.config
    agents = among(ctx.candidates(), sel.plan)
    ids = [p.id for p in agents]
    limit = open_slots(cfg.reply_limit, sel.plan)
    request = selection_model_request(
        text=ctx.info.user_text, agents=agents, context=sel.context, intent=intent,
        reply_limit=limit, language=cfg.language, recent_transcript=ctx.transcript,
        chattiness=cfg.chattiness, mentioned_ids=sel.mentions,
    )  # fmt: skip
    return await struct_stage(
        "select", model, request, SpeakerSelection, lambda: None,
        validate=lambda s: validate_selection(s, ids, limit), constraints=selection_constraints(ids, limit),
    )  # fmt: skip


def open_slots(reply_limit: int, plan: SelectionPlan) -> int:
    """How many speakers the selector may name: the turn's limit, less the ``settled`` ones."""
    return max(1, reply_limit - len(plan.settled))


def choose(ctx: TurnContext, sel: Selection, intent: UserIntent, emotion: UserEmotion, weights: ScoringWeights,
           choice: SpeakerSelection | None) -> SelectionDecision:  # fmt: skip
    """The turn's decision: the scorer's own without a model choice, else the model's choice after
    the mentions and the plan's settled picks."""
    if choice is None:
        return sel.scorer
    return decide(ctx, sel.context, intent, emotion, sel.mentions, weights, choice, sel.plan.settled)


def among(agents: list[AgentProfile], plan: SelectionPlan) -> list[AgentProfile]:
    """Who the selector may choose: everyone it may, or on a ``hybrid`` close call the contenders."""
    return [p for p in agents if p.id in plan.contenders] if plan.contenders else agents


def outcome(ctx: TurnContext, sel: Selection, decision: SelectionDecision) -> SelectionOutcome:
    return selection_outcome(sel.plan, decision, direct=ctx.direct, continuation=ctx.info.continuation)


def selector_may_disagree(model: Any, sel: Selection, *, combined: bool = False) -> bool:
    """Speculation only pays when the decision waits for a model: the selector when the plan asks
    it, else (``scorer``, or ``hybrid`` with a clear margin) the understanding stages, whose
    reading of the message may differ from the offline one the guess was made on. ``combined``:
    the one combined call decides all of it."""
    if not sel.open:
        return False
    if combined:
        return model_configured(model, "combined")
    if sel.selector_needed:
        return model_configured(model, "select")
    return model_configured(model, "intent") or model_configured(model, "emotion")
