"""A small offline emotion classifier read from ``lexicon.json``, scored with pure Python.

The artifact is produced by ``python -m scheduling.emotion.train_lexicon`` (see that module for
the data, the label mapping and the held-out figures). It holds, per language, a multinomial
logistic regression over binary n-gram features: one intercept per class and, per n-gram, one
integer weight per class (``weight / scale`` is the coefficient). Scoring is
``softmax(intercept + sum of the weights of the n-grams present)``.

Features (shared with the training script, so training and runtime see the same n-grams):

* ``zh`` (any CJK character in the text): character unigrams and bigrams inside each run of CJK
  characters (no bigram across punctuation or spaces), plus whole Latin words.
* ``en``: lower-cased word unigrams and adjacent-word bigrams (``"so happy"``).

Nothing here imports scikit-learn: the runtime needs only the stdlib and msgspec. The artifact
is loaded once per process (``default_classifier``) from the package (``importlib.resources``).
"""

from __future__ import annotations

import functools
import importlib.resources
import logging
import math
import re
from pathlib import Path
from typing import Any, Literal

import msgspec

ARTIFACT_NAME = "lexicon.json"
ARTIFACT_FORMAT = 1

Language = Literal["zh", "en"]

_CJK_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK = re.compile(f"[{_CJK_RANGES}]")
_ZH_SEGMENTS = re.compile(f"[{_CJK_RANGES}]+|[a-z0-9]+(?:'[a-z]+)*")
_EN_TOKENS = re.compile(r"[a-z0-9]+(?:'[a-z]+)*")

log = logging.getLogger(__name__)


def language_of(text: str) -> Language | None:
    """``zh`` when the text has any CJK character, ``en`` when it has a Latin word, else None."""
    if _CJK.search(text):
        return "zh"
    if _EN_TOKENS.search(_normalise(text)):
        return "en"
    return None


def _normalise(text: str) -> str:
    return text.lower().replace("\u2019", "'").replace("`", "'")


def features(text: str, lang: Language) -> list[str]:
    """The n-grams of ``text`` for the ``lang`` model, in order of appearance (may repeat)."""
    norm = _normalise(text)
    out: list[str] = []
    if lang == "zh":
        for segment in _ZH_SEGMENTS.findall(norm):
            if not _CJK.match(segment):
                out.append(segment)
                continue
            out.extend(segment)
            out.extend(segment[i:i + 2] for i in range(len(segment) - 1))
        return out
    tokens = _EN_TOKENS.findall(norm)
    out.extend(tokens)
    out.extend(f"{a} {b}" for a, b in zip(tokens, tokens[1:]))
    return out


class LanguageModel(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One language's model. ``threshold``: the least probability at which a non-neutral label is
    used for text the heuristics call neutral; ``override_threshold``: the least probability at
    which it replaces a weak (single-keyword) heuristic label (> 1 means never). Both were chosen
    on the validation split by the training script."""

    labels: list[str]
    intercepts: list[float]
    scale: float
    threshold: float
    override_threshold: float
    weights: dict[str, list[int]]


class Lexicon(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    format: int
    models: dict[str, LanguageModel]
    info: dict[str, Any] = {}


class Prediction(msgspec.Struct, frozen=True):
    label: str
    probability: float
    language: Language


class EmotionClassifier:
    """Scores texts with a ``Lexicon``. Pure and deterministic; safe to share between threads."""

    __slots__ = ("lexicon",)

    def __init__(self, lexicon: Lexicon) -> None:
        if lexicon.format != ARTIFACT_FORMAT:
            raise ValueError(f"emotion lexicon format {lexicon.format}, expected {ARTIFACT_FORMAT}")
        for lang, model in lexicon.models.items():
            width = len(model.labels)
            if width < 2 or len(model.intercepts) != width or "neutral" not in model.labels:
                raise ValueError(f"emotion lexicon model {lang!r}: labels/intercepts malformed")
            if any(len(w) != width for w in model.weights.values()):
                raise ValueError(f"emotion lexicon model {lang!r}: a weight row has the wrong width")
        self.lexicon = lexicon

    def model(self, lang: Language) -> LanguageModel | None:
        return self.lexicon.models.get(lang)

    def probabilities(self, text: str) -> tuple[Language, dict[str, float]] | None:
        """Every class's probability, or None when no model fits the text."""
        lang = language_of(text)
        model = self.model(lang) if lang else None
        if lang is None or model is None:
            return None
        logits = list(model.intercepts)
        for gram in set(features(text, lang)):
            row = model.weights.get(gram)
            if row is not None:
                for k, w in enumerate(row):
                    logits[k] += w / model.scale
        top = max(logits)
        exps = [math.exp(v - top) for v in logits]
        total = sum(exps)
        return lang, {label: e / total for label, e in zip(model.labels, exps)}

    def predict(self, text: str) -> Prediction | None:
        """The most probable label (ties: the artifact's label order) and its probability."""
        scored = self.probabilities(text)
        if scored is None:
            return None
        lang, probs = scored
        label = max(probs, key=probs.__getitem__)
        return Prediction(label=label, probability=round(probs[label], 6), language=lang)

    def classify(self, text: str) -> tuple[str, float]:
        """``(label, probability)``; ``("neutral", 1.0)`` for text no model can read."""
        p = self.predict(text)
        return ("neutral", 1.0) if p is None else (p.label, p.probability)

    def with_thresholds(self, lang: Language, threshold: float, override_threshold: float) -> EmotionClassifier:
        """A copy with other thresholds for ``lang`` (used by the training script to tune them)."""
        models = dict(self.lexicon.models)
        models[lang] = msgspec.structs.replace(
            models[lang], threshold=threshold, override_threshold=override_threshold,
        )
        return EmotionClassifier(msgspec.structs.replace(self.lexicon, models=models))


def decode_lexicon(data: bytes | str) -> Lexicon:
    return msgspec.json.decode(data, type=Lexicon)


def load_classifier(path: str | Path | None = None) -> EmotionClassifier:
    """The classifier from ``path``, or from the artifact shipped next to this module."""
    if path is None:
        data = importlib.resources.files("scheduling.emotion").joinpath(ARTIFACT_NAME).read_bytes()
    else:
        data = Path(path).read_bytes()
    return EmotionClassifier(decode_lexicon(data))


@functools.cache
def default_classifier() -> EmotionClassifier | None:
    """The shipped classifier, loaded once. None (heuristics only) if the artifact is missing or
    unreadable: the fallback must never fail a turn."""
    try:
        return load_classifier()
    except (OSError, ValueError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        log.warning("emotion lexicon unavailable, offline emotion uses heuristics only: %s", exc)
        return None


def classify(text: str) -> tuple[str, float]:
    """``(label, probability)`` from the shipped classifier (``("neutral", 1.0)`` without one)."""
    classifier = default_classifier()
    return ("neutral", 1.0) if classifier is None else classifier.classify(text)
