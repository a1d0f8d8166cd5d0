"""Step 3 of a turn: who replies. The scheduling library decides; this step runs the LLM
selector (when the library says it is needed); ``speculative_ids`` turns the fallback scorer's
early pick into the actors the pipeline starts while the selector runs."""

from __future__ import annotations

from typing import Any

import msgspec

from app.turns.context import TurnContext
from app.turns.stages import StageRun, model_configured, struct_stage
from scheduling import (
    GroupSpeakingContext, SelectionDecision, SpeakerSelection, UserEmotion, UserIntent, build_speaking_context,
    decide_direct, decide_speakers, llm_selection_needed, selection_constraints, selection_model_request,
    validate_selection,
)  # fmt: skip
from scheduling.selection.weights import ScoringWeights


class Selection(msgspec.Struct, kw_only=True):
    """What step 3 knows before the selector answers."""

    context: GroupSpeakingContext
    mentions: list[str]
    selector_needed: bool


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
                                     current_user_seq=info.user_message_seq)  # fmt: skip
    needed = not ctx.direct and llm_selection_needed(
        intent, emotion, mentions, reply_limit=cfg.reply_limit, candidate_count=len(info.agents),
        chattiness=cfg.chattiness,
    )  # fmt: skip
    return Selection(context=context, mentions=mentions, selector_needed=needed)


def decide(ctx: TurnContext, context: GroupSpeakingContext, intent: UserIntent, emotion: UserEmotion,
           mentions: list[str], weights: ScoringWeights, llm_choice: SpeakerSelection | None) -> SelectionDecision:  # fmt: skip
    cfg = ctx.config
    decision = decide_speakers(
        agents=ctx.info.agents, context=context, intent=intent, mentions=mentions, weights=weights,
        llm_selection=llm_choice, reply_limit=cfg.reply_limit, chattiness=cfg.chattiness, emotion=emotion,
    )  # fmt: skip
    return decide_direct(decision) if ctx.direct else decision


async def run_selector(model: Any, ctx: TurnContext, sel: Selection, intent: UserIntent) -> StageRun[SpeakerSelection | None]:
    if not sel.selector_needed:
        return StageRun(stage="select", value=None, source="skipped", ms=0.0)
    cfg, ids = ctx.config, [p.id for p in ctx.info.agents]
    request = selection_model_request(
        text=ctx.info.user_text, agents=ctx.info.agents, context=sel.context, intent=intent,
        reply_limit=cfg.reply_limit, language=cfg.language, recent_transcript=ctx.transcript,
        chattiness=cfg.chattiness, mentioned_ids=sel.mentions,
    )  # fmt: skip
    limit = max(1, cfg.reply_limit)
    return await struct_stage(
        "select", model, request, SpeakerSelection, lambda: None,
        validate=lambda s: validate_selection(s, ids, limit), constraints=selection_constraints(ids, limit),
    )  # fmt: skip


def selector_may_disagree(model: Any, sel: Selection) -> bool:
    """Speculation only pays when a selector call will really run."""
    return sel.selector_needed and model_configured(model, "select")
