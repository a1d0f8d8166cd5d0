"""User intent: the Struct, the LLM prompt + validation, and the offline fallback."""

from scheduling.intent.fallback import fallback_intent
from scheduling.intent.model import (
    IntentInvalid, IntentKind, UserIntent, clean_intent, decode_intent, intent_constraints,
    validate_intent,
)
from scheduling.intent.prompt import INTENT_PURPOSE, build_intent_request, intent_model_request

__all__ = [
    "intent_constraints",
    "INTENT_PURPOSE", "IntentInvalid", "IntentKind", "UserIntent", "build_intent_request", "clean_intent",
    "decode_intent", "fallback_intent", "intent_model_request", "validate_intent",
]
