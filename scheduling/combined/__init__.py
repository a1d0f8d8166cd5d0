"""One structured call for the three judgements of a turn (``settings.orchestration: combined``)."""

from scheduling.combined.model import TurnReading, reading_constraints, split_reading, validate_reading
from scheduling.combined.prompt import COMBINED_PURPOSE, COMBINED_SCHEMA_NAME, combined_model_request

__all__ = [
    "COMBINED_PURPOSE", "COMBINED_SCHEMA_NAME", "TurnReading", "combined_model_request", "reading_constraints",
    "split_reading", "validate_reading",
]
