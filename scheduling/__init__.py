"""Group speaker scheduling: a pure library (stdlib + msgspec only).

Per user message the app calls, in order: ``fallback_intent``/``intent_model_request`` and
``fallback_emotion``/``emotion_model_request`` (concurrently), ``find_mentions``,
``build_speaking_context``, optionally ``selection_model_request`` + ``decode_selection``,
then ``decide_speakers``. Time, randomness and model calls stay with the caller.
"""

from scheduling.context import AgentSpeakingContext, GroupSpeakingContext, build_speaking_context
from scheduling.emotion import (
    EMOTION_CONSTRAINTS, EMOTION_PURPOSE, NEUTRAL_EMOTION, EmotionInvalid, UserEmotion, build_emotion_request, clamp_emotion,
    decode_emotion, emotion_model_request, fallback_emotion, settle_needs, validate_emotion,
)
from scheduling.freshness import DEFAULT_WINDOW, Freshness, compute_freshness, freshness_score
from scheduling.intent import (
    INTENT_PURPOSE, IntentInvalid, UserIntent, build_intent_request, clean_intent, decode_intent, fallback_intent,
    intent_constraints, intent_model_request, validate_intent,
)
from scheduling.mentions import find_mentions
from scheduling.ports import ChatMessage, ChatModel, ModelRequest, ModelResult, ResponseSchema, Usage
from scheduling.profiles import AgentCapabilities, AgentProfile, DirectChatStats, GroupMessage
from scheduling.relationship import (
    Relationship, RelationshipStage, relationship_from_direct_chat, relationship_score, stage_for_message_count,
)
from scheduling.selection import (
    DEFAULT_HYBRID_MARGIN, SelectionMode, SelectionOutcome, SelectionPlan, plan_selection, scorer_margin,
    selection_outcome,
)
from scheduling.selection import (
    DEFAULT_WEIGHTS, FEATURE_NAMES, SELECTION_PURPOSE, CandidateScore, Chattiness, ScoringWeights, SelectedBy,
    SelectionDecision, SelectionRejected, SpeakerSelection, WeightsFileError, build_selection_request,
    certain_speakers, decide_direct, decide_speakers, decode_selection, llm_selection_needed, load_weights, plan_reply_count, score_candidates,
    selection_constraints, selection_model_request, validate_selection,
)
from scheduling.transcript import format_transcript

__all__ = [
    "DEFAULT_HYBRID_MARGIN", "SelectionMode", "SelectionOutcome", "SelectionPlan", "plan_selection", "scorer_margin",
    "selection_outcome",
    "DEFAULT_WEIGHTS", "DEFAULT_WINDOW", "EMOTION_PURPOSE", "FEATURE_NAMES", "INTENT_PURPOSE", "NEUTRAL_EMOTION",
    "SELECTION_PURPOSE", "AgentCapabilities", "AgentProfile", "AgentSpeakingContext", "CandidateScore", "ChatMessage",
    "ChatModel", "Chattiness", "DirectChatStats", "EmotionInvalid", "Freshness", "GroupMessage",
    "GroupSpeakingContext", "IntentInvalid", "ModelRequest", "ModelResult", "Relationship", "RelationshipStage",
    "ResponseSchema", "ScoringWeights", "SelectedBy", "SelectionDecision", "SelectionRejected", "SpeakerSelection",
    "Usage", "UserEmotion", "UserIntent", "WeightsFileError", "build_emotion_request", "build_intent_request",
    "build_selection_request", "build_speaking_context", "clamp_emotion", "clean_intent", "compute_freshness",
    "decide_speakers", "decode_emotion", "decode_intent", "decode_selection", "emotion_model_request",
    "fallback_emotion", "fallback_intent", "find_mentions", "format_transcript", "freshness_score",
    "intent_model_request", "llm_selection_needed", "load_weights", "plan_reply_count", "relationship_from_direct_chat",
    "relationship_score", "score_candidates", "selection_constraints", "selection_model_request", "stage_for_message_count",
    "EMOTION_CONSTRAINTS", "certain_speakers", "decide_direct", "intent_constraints", "settle_needs", "validate_emotion", "validate_intent", "validate_selection",
]
