"""Decisions CSVs sampled from a known weight vector (conditional logit: argmax of w·x + Gumbel)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from analytics.export import DECISION_COLUMNS
from scheduling.selection.features import FEATURE_NAMES

TRUE_WEIGHTS = {
    "relationship_score": 2.0, "freshness_score": 1.2, "recent_reply_count": -0.6, "spoke_last_turn": -1.2,
    "comfort_match": 3.0, "advice_match": 1.8, "deescalation_match": 2.6, "playful_match": 1.0, "mentioned": 4.0,
}


def sample_features(rng: np.random.Generator, n: int) -> np.ndarray:
    x = np.zeros((n, len(FEATURE_NAMES)))
    x[:, 0] = rng.choice([0.25, 0.52, 0.78, 0.95], n)
    x[:, 1] = rng.random(n)
    x[:, 2] = rng.poisson(1.0, n).clip(0, 6)
    x[:, 3] = rng.random(n) < 0.25
    for col in range(4, 8):
        x[:, col] = np.where(rng.random(n) < 0.3, rng.random(n), 0.0)
    return x


def write_sampled_decisions(path: Path, *, turns: int, seed: int, candidates: int = 4, conversations: int = 40,
                            weights: dict[str, float] = TRUE_WEIGHTS) -> Path:
    rng = np.random.default_rng(seed)
    w = np.array([weights[f] for f in FEATURE_NAMES])
    with path.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(DECISION_COLUMNS)
        for t in range(turns):
            x = sample_features(rng, candidates)
            pick = int(np.argmax(x @ w + rng.gumbel(size=candidates)))
            for i in range(candidates):
                row = dict(zip(FEATURE_NAMES, x[i].round(4), strict=True)) | {
                    "turn_id": f"t{t}", "conversation_id": f"c{t % conversations}", "agent_id": f"a{i}",
                    "created_at": "2026-01-01T00:00:00Z", "selected": int(i == pick), "selected_by": "llm" if i == pick else "",
                    "rank": i + 1, "score": 0.0, "weights_version": "seed-v0", "primary_emotion": "neutral",
                    "intensity": 0.3, "llm_selected": int(i == pick),
                }
                out.writerow([row[c] for c in DECISION_COLUMNS])
    return path
