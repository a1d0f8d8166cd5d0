"""One structured call for the three judgements of a turn, and its cross reply planned up front
(``settings.orchestration: combined``)."""

from scheduling.combined.model import (
    FollowUp, TurnReading, planned_follow_up, reading_constraints, split_reading, validate_reading,
)
from scheduling.combined.prompt import COMBINED_PURPOSE, COMBINED_SCHEMA_NAME, combined_model_request

__all__ = [
    "COMBINED_PURPOSE", "COMBINED_SCHEMA_NAME", "FollowUp", "TurnReading", "combined_model_request",
    "planned_follow_up", "reading_constraints", "split_reading", "validate_reading",
]
