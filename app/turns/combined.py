"""``settings.orchestration: combined``: intent, emotion and the speaker choice from one
structured call (``scheduling.combined``), instead of intent ∥ emotion and then the selector.

The three judgements stay separate fields and are recorded as the staged stages record them
(``StageRun`` with ``via: combined``). Failure falls back exactly as the staged stages do: the
offline intent and emotion, and the scorer's decision (path ``fallback`` when the mode would
have asked the model). The model's speaker choice counts only where the selection mode would
ask the selector (``llm``, or ``hybrid`` on a close call, and there only among the close members);
a clear scorer decision stands. Its cross reply planned up front (``ahead``) replaces round one's
plan call when it fits the replies kept (``app.turns.cross.PlannedAhead``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from app.turns.context import TurnContext
from app.turns.cross import PlannedAhead
from app.turns.selection import Selection, prepare_selection
from app.turns.stages import StageRun, struct_stage
from scheduling import UserEmotion, UserIntent, build_speaking_context, fallback_emotion, fallback_intent
from scheduling.combined import (
    TurnReading, combined_model_request, planned_follow_up, reading_constraints, split_reading, validate_reading,
)
from scheduling.selection.validation import SpeakerSelection
from scheduling.selection.weights import ScoringWeights


class CombinedReading(msgspec.Struct, kw_only=True):
    call: StageRun[Any]  # the one model call (its usage, time and attempts)
    intent: StageRun[UserIntent]
    emotion: StageRun[UserEmotion]
    selection: Selection  # prepared on this call's intent and emotion
    select: StageRun[SpeakerSelection | None]  # the model's choice where the mode uses it, else skipped
    ahead: PlannedAhead | None = None  # the cross reply planned up front; None: the call failed, plan as staged


def combined_applies(ctx: TurnContext) -> bool:
    """A group turn with a user message (a direct chat has no speaker to choose; a Continue no new text)."""
    return ctx.config.orchestration == "combined" and not ctx.direct and not ctx.info.continuation


async def read_combined(model: Any, ctx: TurnContext, mentions: list[str], weights: ScoringWeights,
                        window: int) -> CombinedReading:  # fmt: skip
    info, cfg = ctx.info, ctx.config
    candidates = ctx.candidates()
    ids, limit = [p.id for p in candidates], max(1, cfg.reply_limit)
    # The agents' signals (freshness, relationship) do not depend on the emotion; the prompt leaves
    # the emotion line out, so the offline reading here only fills the struct.
    context = build_speaking_context(info.agents, ctx.stats, info.recent, fallback_emotion(info.user_text),
                                     window=window, current_user_seq=info.user_message_seq,
                                     presence=info.presence)  # fmt: skip
    request = combined_model_request(
        text=info.user_text, agents=candidates, context=context, reply_limit=limit, language=cfg.language,
        recent_transcript=ctx.transcript, chattiness=cfg.chattiness, mentioned_ids=mentions,
    )  # fmt: skip
    call = await struct_stage("combined", model, request, TurnReading, lambda: None,
                              validate=lambda r: validate_reading(r, ids, limit),
                              constraints=reading_constraints(ids, limit))  # fmt: skip
    shared = {"ms": call.ms, "error": call.error, "attempts": call.attempts, "via": "combined"}
    if call.value is None:
        intent = StageRun(stage="intent", value=fallback_intent(info.user_text, info.agents), source="fallback", **shared)
        emotion = StageRun(stage="emotion", value=fallback_emotion(info.user_text), source="fallback", **shared)
        choice: SpeakerSelection | None = None
        ahead = None
    else:
        parsed_intent, parsed_emotion, choice = split_reading(call.value, ids, info.user_text)
        intent = StageRun(stage="intent", value=parsed_intent, source="llm", **shared)
        emotion = StageRun(stage="emotion", value=parsed_emotion, source="llm", **shared)
        ahead = PlannedAhead(planned_follow_up(call.value, ids))
    sel = prepare_selection(ctx, intent.value, emotion.value, mentions, weights, window)
    if not sel.selector_needed:
        select = StageRun(stage="select", value=None, source="skipped", ms=0.0, via="combined")
    else:
        choice = within(choice, sel.plan.contenders)
        select = StageRun(stage="select", value=choice, source="llm" if choice is not None else "fallback", **shared)
    return CombinedReading(call=call, intent=intent, emotion=emotion, selection=sel, select=select, ahead=ahead)


def within(choice: SpeakerSelection | None, contenders: list[str]) -> SpeakerSelection | None:
    """The one call chose among every member before the margin was known; on a ``hybrid`` close call
    only its picks among the contenders count (none of them: the scorer's decision stands)."""
    if choice is None or not contenders:
        return choice
    kept = [a for a in choice.selected_agent_ids if a in contenders]
    return msgspec.structs.replace(choice, selected_agent_ids=kept) if kept else None
