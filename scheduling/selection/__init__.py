"""Speaker selection: LLM prompt + validation, the fallback scorer, its weights, the decision."""

from scheduling.selection.capabilities import CAPABILITIES, agent_capabilities
from scheduling.selection.decide import (
    SelectionDecision, certain_speakers, decide_direct, decide_speakers, llm_selection_needed,
)
from scheduling.selection.features import FEATURE_NAMES, candidate_features, user_needs
from scheduling.selection.mode import (
    DEFAULT_HYBRID_MARGIN, DEFAULT_MODE, SELECTION_MODES, SELECTION_PATHS, SelectionMode, SelectionOutcome,
    SelectionPath, SelectionPlan, model_needed, plan_selection, scorer_margin, selection_outcome,
)
from scheduling.selection.prompt import (
    SELECTION_PURPOSE, build_selection_request, format_speaking_context, selection_model_request,
)
from scheduling.selection.scorer import (
    CandidateScore, Chattiness, SelectedBy, plan_reply_count, score_candidates, weighted_score,
)
from scheduling.selection.validation import (
    SelectionRejected, SpeakerSelection, decode_selection, normalize_selection, validate_selection,
    selection_constraints,
)
from scheduling.selection.weights import DEFAULT_WEIGHTS, ScoringWeights, WeightsFileError, load_weights, weights_problems

__all__ = [
    "DEFAULT_HYBRID_MARGIN", "DEFAULT_MODE", "SELECTION_MODES", "SELECTION_PATHS", "SelectionMode", "SelectionOutcome",
    "SelectionPath", "SelectionPlan", "model_needed", "plan_selection", "scorer_margin", "selection_outcome",
    "selection_constraints", "certain_speakers", "decide_direct",
    "CAPABILITIES", "DEFAULT_WEIGHTS", "FEATURE_NAMES", "SELECTION_PURPOSE", "CandidateScore", "Chattiness",
    "ScoringWeights", "SelectedBy", "SelectionDecision", "SelectionRejected", "SpeakerSelection", "WeightsFileError",
    "agent_capabilities", "build_selection_request", "candidate_features", "decide_speakers", "decode_selection",
    "format_speaking_context", "llm_selection_needed", "load_weights", "normalize_selection", "plan_reply_count",
    "score_candidates", "selection_model_request", "user_needs", "validate_selection", "weighted_score",
    "weights_problems",
]
