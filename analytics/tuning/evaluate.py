"""``companion tune evaluate``: compare weight files on held-out turns.

The input should be turns the files were not fitted on (e.g. an export of a later period).
Top-1 and MRR do not depend on the scale of the weights; log-loss does, so a tuned file's
weights are divided by its ``training.scale`` first (its calibrated, fitted scale).
"""

from __future__ import annotations

from pathlib import Path

from analytics.tuning.choice_model import TurnMetrics, score_turns
from analytics.tuning.dataset import load_decisions
from scheduling.selection.weights import ScoringWeights, load_weights


def calibrated(weights: ScoringWeights) -> dict[str, float]:
    scale = (weights.training or {}).get("scale") or 1.0
    return {k: v / float(scale) for k, v in weights.weights.items()}


def evaluate(path: str | Path, weight_files: list[str | Path], *, label: str = "selected") -> list[tuple[str, str, TurnMetrics]]:
    """(file, version, metrics) per weights file, on the same usable turns."""
    files = [(str(f), load_weights(f)) for f in weight_files]
    data = load_decisions(path, label)
    return [(name, w.version, score_turns(data, calibrated(w))) for name, w in files]
