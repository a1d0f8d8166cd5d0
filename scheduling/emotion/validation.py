"""Semantic checks for an LLM emotion answer: clamp what is out of range and say so."""

from __future__ import annotations

import math

import msgspec

from scheduling.emotion.model import REASON_MAX_CHARS, UserEmotion


class EmotionInvalid(ValueError):
    """The model's text is not a ``UserEmotion`` at all (bad JSON, wrong enum, missing field)."""

    def __init__(self, text: str, problem: str) -> None:
        super().__init__(f"emotion output rejected: {problem}")
        self.text = text
        self.problem = problem


def validate_emotion(emotion: UserEmotion) -> list[str]:
    """Problems a caller should record; ``clamp_emotion`` fixes every one of them."""
    problems: list[str] = []
    if not math.isfinite(emotion.intensity) or not 0.0 <= emotion.intensity <= 1.0:
        problems.append(f"intensity {emotion.intensity!r} outside 0..1")
    reason = emotion.reason.strip()
    if len(reason) > REASON_MAX_CHARS:
        problems.append(f"reason has {len(reason)} chars, max {REASON_MAX_CHARS}")
    return problems


def clamp_emotion(emotion: UserEmotion) -> UserEmotion:
    intensity = emotion.intensity if math.isfinite(emotion.intensity) else 0.5
    return msgspec.structs.replace(
        emotion,
        intensity=min(1.0, max(0.0, intensity)),
        reason=emotion.reason.strip()[:REASON_MAX_CHARS],
    )


def decode_emotion(text: str) -> tuple[UserEmotion, list[str]]:
    """Decode + clamp. Raises ``EmotionInvalid`` when the shape is wrong (worth a repair);
    range problems come back as notes with an already clamped value."""
    try:
        emotion = msgspec.json.decode(text, type=UserEmotion)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise EmotionInvalid(text, str(exc)) from exc
    problems = validate_emotion(emotion)
    return (clamp_emotion(emotion) if problems else emotion), problems
