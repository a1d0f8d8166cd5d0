"""Scoring weights are data: a versioned JSON file, tuned offline, loaded at start.

``seed-v0`` is the seed's hand-set numbers. Two features are not in the seed:

- ``playful_match`` 1.5: the seed's principle says a playful agent *may* be chosen for a
  light, high-energy user, so it is a smaller bonus than comfort (2.4), de-escalation (2.2) or
  advice (2.1) and never outweighs a real need.
- ``mentioned`` 4.0: mentioned agents are selected by rule before scoring, so this weight only
  makes the ranking (and a model tuned on it) agree with that rule in ordinary cases; it is
  larger than any single need bonus.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import msgspec

from scheduling.selection.features import FEATURE_NAMES


class ScoringWeights(msgspec.Struct, frozen=True, rename="camel"):
    """Unknown top-level keys are ignored so a tuning run can add its own metadata; unknown,
    missing or non-numeric *features* are errors (a typo must not silently score 0)."""

    version: str
    weights: dict[str, float]
    created_at: str | None = None
    metrics: dict[str, Any] | None = None
    training: dict[str, Any] | None = None


DEFAULT_WEIGHTS = ScoringWeights(
    version="seed-v0",
    weights={
        "relationship_score": 1.6,
        "freshness_score": 1.8,
        "recent_reply_count": -0.45,
        "spoke_last_turn": -0.9,
        "comfort_match": 2.4,
        "advice_match": 2.1,
        "deescalation_match": 2.2,
        "playful_match": 1.5,
        "mentioned": 4.0,
    },
)


class WeightsFileError(ValueError):
    def __init__(self, path: str | Path, problem: str) -> None:
        super().__init__(f"scoring weights file {str(path)!r}: {problem}")
        self.path = str(path)
        self.problem = problem


def weights_problems(weights: ScoringWeights) -> list[str]:
    problems = []
    if not weights.version.strip():
        problems.append("version is empty")
    missing = [f for f in FEATURE_NAMES if f not in weights.weights]
    unknown = sorted(set(weights.weights) - set(FEATURE_NAMES))
    if missing:
        problems.append("missing feature weight(s): " + ", ".join(missing))
    if unknown:
        problems.append("unknown feature(s): " + ", ".join(unknown) + f" (expected {', '.join(FEATURE_NAMES)})")
    problems += [f"weight for {k} is not a finite number: {v!r}" for k, v in weights.weights.items() if not math.isfinite(v)]
    return problems


def load_weights(path: str | Path) -> ScoringWeights:
    """Read and check a weights file; every failure is a ``WeightsFileError`` naming the file."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise WeightsFileError(path, f"cannot be read ({exc.strerror or exc})") from exc
    try:
        data = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise WeightsFileError(path, f"is not valid JSON: {exc}") from exc
    entries = data.get("weights") if isinstance(data, dict) else None
    if isinstance(entries, dict):
        bad = [f"weight for {k} is not a number: {v!r}" for k, v in entries.items()
               if isinstance(v, bool) or not isinstance(v, (int, float))]
        if bad:
            raise WeightsFileError(path, "; ".join(bad))
    try:
        weights = msgspec.convert(data, type=ScoringWeights)
    except msgspec.ValidationError as exc:
        raise WeightsFileError(path, f"wrong shape: {exc}") from exc
    problems = weights_problems(weights)
    if problems:
        raise WeightsFileError(path, "; ".join(problems))
    return weights
