"""A conditional choice model fitted as logistic regression on within-turn differences.

Within one turn, the chance that chosen candidate i beats non-chosen j depends only on
w·(x_i − x_j), so fitting logistic regression without an intercept on those differences (both
signs, labels 1/0, so the problem is symmetric) estimates the scorer's weights; per-turn
constants (the user's mood, the time) cancel out. ``mentioned`` is not fitted: mention turns
are excluded, so it carries no signal, and the current weight is kept.
"""

from __future__ import annotations

import msgspec
import numpy as np
from sklearn.linear_model import LogisticRegression

from analytics.tuning.dataset import ChoiceData
from scheduling.selection.features import FEATURE_NAMES

FITTED = tuple(f for f in FEATURE_NAMES if f != "mentioned")
FIT_COLUMNS = np.array([FEATURE_NAMES.index(f) for f in FITTED])


class TurnMetrics(msgspec.Struct, rename="camel"):
    """top-1: the best-scored candidate was chosen (ties count against); MRR: 1 / position of the
    best-scored chosen candidate; log-loss: −log P(choice falls in the chosen set) under a
    softmax of the scores, averaged over turns."""

    turns: int
    top1_accuracy: float
    mean_reciprocal_rank: float
    log_loss: float


def pair_differences(data: ChoiceData) -> np.ndarray:
    """x_chosen − x_other for every (chosen, not chosen) pair of the same turn."""
    pos_rows = np.flatnonzero(data.positive)
    neg_rows = np.flatnonzero(~data.positive)
    neg_count = np.bincount(data.turn[neg_rows], minlength=data.turns)
    neg_start = np.r_[0, np.cumsum(neg_count)[:-1]]
    reps = neg_count[data.turn[pos_rows]]
    left = np.repeat(pos_rows, reps)
    offsets = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
    right = neg_rows[np.repeat(neg_start[data.turn[pos_rows]], reps) + offsets]
    return data.x[left][:, FIT_COLUMNS] - data.x[right][:, FIT_COLUMNS]


def fit_weights(data: ChoiceData, *, c: float = 10.0) -> dict[str, float]:
    diffs = pair_differences(data)
    x = np.vstack([diffs, -diffs])
    y = np.r_[np.ones(len(diffs)), np.zeros(len(diffs))]
    model = LogisticRegression(fit_intercept=False, C=c, max_iter=2000, tol=1e-8)
    model.fit(x, y)
    return {f: float(w) for f, w in zip(FITTED, model.coef_[0], strict=True)}


def score_turns(data: ChoiceData, weights: dict[str, float]) -> TurnMetrics:
    w = np.array([weights.get(f, 0.0) for f in FEATURE_NAMES])
    s = data.x @ w
    starts = data.starts
    best_pos = np.maximum.reduceat(np.where(data.positive, s, -np.inf), starts)
    best_neg = np.maximum.reduceat(np.where(data.positive, -np.inf, s), starts)
    above = np.add.reduceat((~data.positive) & (s >= best_pos[data.turn]), starts)
    top = np.maximum.reduceat(s, starts)
    e = np.exp(s - top[data.turn])
    log_all = np.log(np.add.reduceat(e, starts))
    log_pos = np.log(np.add.reduceat(np.where(data.positive, e, 0.0), starts))
    return TurnMetrics(
        turns=data.turns,
        top1_accuracy=round(float(np.mean(best_pos > best_neg)), 6),
        mean_reciprocal_rank=round(float(np.mean(1.0 / (1 + above))), 6),
        log_loss=round(float(np.mean(log_all - log_pos)), 6),
    )
