"""User emotion: the Struct, the LLM prompt + validation, and the offline fallback."""

from scheduling.emotion.fallback import fallback_emotion
from scheduling.emotion.needs import settle_needs
from scheduling.emotion.model import EMOTION_CONSTRAINTS, NEUTRAL_EMOTION, PrimaryEmotion, SocialEnergy, UserEmotion
from scheduling.emotion.prompt import EMOTION_PURPOSE, build_emotion_request, emotion_model_request
from scheduling.emotion.validation import EmotionInvalid, clamp_emotion, decode_emotion, validate_emotion

__all__ = [
    "EMOTION_CONSTRAINTS",
    "EMOTION_PURPOSE", "NEUTRAL_EMOTION", "EmotionInvalid", "PrimaryEmotion", "SocialEnergy", "UserEmotion",
    "build_emotion_request", "clamp_emotion", "decode_emotion", "emotion_model_request", "fallback_emotion",
    "settle_needs", "validate_emotion",
]
