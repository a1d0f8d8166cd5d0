"""Intent and emotion, concurrently; each falls back offline on any model failure."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from app.turns.stages import StageRun, struct_stage
from scheduling import (
    EMOTION_CONSTRAINTS, AgentProfile, UserEmotion, UserIntent, clamp_emotion, clean_intent, emotion_model_request, fallback_emotion,
    fallback_intent, intent_constraints, intent_model_request, settle_needs,
)  # fmt: skip


async def understand(
    model: Any, text: str, agents: Sequence[AgentProfile], transcript: str, language: str, *, direct: bool,
    emotion_source: str = "model",
) -> tuple[StageRun[UserIntent], StageRun[UserEmotion]]:
    """A direct conversation has one listener, so its intent is the offline reading (no model call).
    ``emotion_source="offline"``: the emotion is the offline detector's reading, without a model
    call (source ``offline``)."""
    member_ids = [a.id for a in agents]

    async def intent() -> StageRun[UserIntent]:
        if direct:
            return StageRun(stage="intent", value=fallback_intent(text, agents), source="skipped", ms=0.0)
        return await struct_stage(
            "intent", model, intent_model_request(text, agents, transcript, language), UserIntent,
            lambda: fallback_intent(text, agents), post=lambda i: clean_intent(i, member_ids),
            constraints=intent_constraints(member_ids),
        )  # fmt: skip

    async def emotion() -> StageRun[UserEmotion]:
        if emotion_source == "offline":
            started = time.perf_counter()
            value = fallback_emotion(text)
            return StageRun(stage="emotion", value=value, source="offline", ms=(time.perf_counter() - started) * 1000)
        return await struct_stage(
            "emotion", model, emotion_model_request(text, transcript, language), UserEmotion,
            lambda: fallback_emotion(text), post=lambda e: settle_needs(clamp_emotion(e), text),
            constraints=EMOTION_CONSTRAINTS,
        )  # fmt: skip

    intent_run, emotion_run = await asyncio.gather(intent(), emotion())
    return intent_run, emotion_run


def offline_understanding(text: str, agents: Sequence[AgentProfile]) -> tuple[StageRun[UserIntent], StageRun[UserEmotion]]:
    """A Continue has no new user text: intent and emotion are the offline reading of the last
    user message (no model call)."""
    return (StageRun(stage="intent", value=fallback_intent(text, agents), source="skipped", ms=0.0),
            StageRun(stage="emotion", value=fallback_emotion(text), source="skipped", ms=0.0))
