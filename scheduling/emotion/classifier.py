"""A small offline emotion classifier read from ``lexicon.json``, scored with pure Python.

The artifact is produced by ``python -m scheduling.emotion.train_lexicon`` (see that module for
the data and the held-out figures, and ``sources.py`` for the label mapping of every source). It
holds, per language, a multinomial logistic regression over binary features over the five classes
``angry / anxious / happy / neutral / sad``: one intercept per class and, per feature, one integer
weight per class (``weight / scale`` is the coefficient). Scoring is
``softmax(intercept + sum of the weights of the features present)``.

Features (shared with the trainer, so training and run time see the same ones):

* ``zh`` (any CJK character in the text): character 1–3-grams inside each run of CJK characters
  (none across punctuation, spaces or Latin words), plus whole Latin words and numbers.
* ``en``: lower-cased words (a letter repeated 3+ times is cut to two: "sooo" → "soo") and
  adjacent-word bigrams.
* Both: each emoji, each Weibo tag, punctuation marks (``p:!``, ``p:?``, ``p:~``, ``p:…``) and the
  keyword rules' labels that fired (``kw:sad``; passed in by ``fallback.py``).

Mixed-script text is handled on purpose (``prepare``): URLs are dropped; a Weibo repost chain
``own words//@name: quoted words`` keeps both texts but not the names (``@name`` mentions are
dropped everywhere), so a user name never counts as an emotion cue; Weibo tags such as ``[心]``
or ``[怒]`` are whole tokens (and their characters do not also count as text); emoji are tokens
(variation selectors, skin tones and joiners removed); Latin words inside Chinese text are tokens
of the Chinese model, so "我今天好sad" is read by the zh model with "sad" as one token (the
keyword rules, run on the raw text, see "sad" too). Traditional characters are read as their
simplified ones (``hanzi.fold_traditional``: "我今天好難過" has the features of "我今天好难过"),
here and in the keyword rules, since every zh source is mainland text. Text with no letters but
emoji goes to the en model. Only the first ``MAX_CHARS`` (600) characters are read, here and by
the keyword rules, which bounds the time per message.

Nothing here imports scikit-learn or numpy: the runtime needs only the stdlib and msgspec. The
artifact is loaded once per process (``default_classifier``) from the package.
"""

from __future__ import annotations

import functools
import importlib.resources
import logging
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import msgspec

from scheduling.hanzi import fold_traditional

ARTIFACT_NAME = "lexicon.json"
ARTIFACT_FORMAT = 2
MAX_CHARS = 600

Language = Literal["zh", "en"]

# The project's emotions → the classifier class each belongs to. The keyword rules' finer labels
# (lonely, stressed, confused, romantic, playful) refine a classifier class of their family.
FAMILY: dict[str, str] = {
    "happy": "happy", "playful": "happy", "romantic": "happy",
    "sad": "sad", "lonely": "sad",
    "anxious": "anxious", "stressed": "anxious",
    "angry": "angry",
    "neutral": "neutral", "confused": "neutral", "unknown": "neutral",
}
COMFORT_CLASSES = ("angry", "anxious", "sad")

_CJK_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK = re.compile(f"[{_CJK_RANGES}]")
_URL = re.compile(r"https?://\S+|www\.\S+")
_REPOST = re.compile(r"//\s*@[^\s:：]{1,30}[:：]?")
_MENTION = re.compile(r"@[^\s:：,，。!！?？@/]{1,30}[:：]?")
_TAG = re.compile(r"\[[^\[\]\s]{1,8}\]")
_EMOJI = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B50\u2B55\u3297\u3299]")
_EMOJI_JUNK = re.compile("[\uFE0E\uFE0F\u200D\U0001F3FB-\U0001F3FF]")
_ZH_SEGMENTS = re.compile(f"[{_CJK_RANGES}]+|[a-z]+(?:'[a-z]+)*|[0-9]+")
_EN_TOKENS = re.compile(r"[a-z]+(?:'[a-z]+)*|[0-9]+")
_PUNCT = {"!": "p:!", "！": "p:!", "?": "p:?", "？": "p:?", "~": "p:~", "～": "p:~", "…": "p:…"}
_PUNCT_RE = re.compile("[!！?？~～…]")
_LONG_LETTER = re.compile(r"([a-z])\1{2,}")

log = logging.getLogger(__name__)


def _normalise(text: str) -> str:
    return fold_traditional(text[:MAX_CHARS]).lower().replace("\u2019", "'").replace("`", "'")


def prepare(text: str) -> tuple[str, list[str]]:
    """``(plain text, symbol tokens)``: URLs, ``//@name:`` and ``@name`` removed; Weibo tags and
    emoji taken out of the text as tokens (in order of appearance, repeats kept)."""
    norm = _EMOJI_JUNK.sub("", _URL.sub(" ", _normalise(text)))
    norm = _MENTION.sub(" ", _REPOST.sub(" // ", norm))
    tokens = _TAG.findall(norm)
    norm = _TAG.sub(" ", norm)
    tokens += _EMOJI.findall(norm)
    return _EMOJI.sub(" ", norm), tokens


def language_of(text: str) -> Language | None:
    """``zh`` when the text has any CJK character, ``en`` when it has a Latin word or only emoji,
    else None."""
    if _CJK.search(text[:MAX_CHARS]):
        return "zh"
    plain, tokens = prepare(text)
    if _EN_TOKENS.search(plain) or tokens:
        return "en"
    return None


def features(text: str, lang: Language, extra: Iterable[str] = ()) -> list[str]:
    """The features of ``text`` for the ``lang`` model, in order of appearance (may repeat);
    ``extra`` (e.g. ``kw:sad``) is appended as given."""
    plain, out = prepare(text)
    out.extend(dict.fromkeys(_PUNCT[p] for p in _PUNCT_RE.findall(plain)))
    if lang == "zh":
        for segment in _ZH_SEGMENTS.findall(plain):
            if not _CJK.match(segment):
                out.append(segment)
                continue
            out.extend(segment)
            out.extend(segment[i:i + 2] for i in range(len(segment) - 1))
            out.extend(segment[i:i + 3] for i in range(len(segment) - 2))
    else:
        tokens = [_LONG_LETTER.sub(r"\1\1", t) for t in _EN_TOKENS.findall(plain)]
        out.extend(tokens)
        out.extend(f"{a} {b}" for a, b in zip(tokens, tokens[1:]))
    out.extend(extra)
    return out


class LanguageModel(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One language's model. ``comfort_threshold``: the least probability of sad + angry +
    anxious at which the user needs comfort although the class is neutral; ``keyword_hits``: the
    number of keyword-rule hits from which the rules' label stands without the classifier (both
    chosen on the validation splits by the trainer); ``floor``: the least probability at which a
    class other than neutral is used for a short text without any emotion keyword (set per
    language, not tuned freely: see ``train_lexicon.FLOOR``); ``heated_threshold`` and
    ``upbeat_threshold``: the least probability of angry (of happy) at which a text whose class is
    neutral still leans that way, for who answers first (see ``fallback``; chosen on the
    validation splits for routing, 1.01 = never, the value for an artifact without them);
    ``keyword_margin``: how close (in probability) a class named by a fired keyword must be to the
    winning class to take its place (chosen on the validation splits; 0 = only exact ties)."""

    labels: list[str]
    intercepts: list[float]
    scale: float
    comfort_threshold: float
    keyword_hits: int
    floor: float
    weights: dict[str, list[int]]
    heated_threshold: float = 1.01
    upbeat_threshold: float = 1.01
    keyword_margin: float = 0.0


class Lexicon(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    format: int
    models: dict[str, LanguageModel]
    info: dict[str, Any] = {}


class Prediction(msgspec.Struct, frozen=True):
    label: str
    probability: float
    language: Language
    comfort_probability: float = 0.0
    probabilities: dict[str, float] = {}


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

    def probabilities(self, text: str, extra: Iterable[str] = ()) -> tuple[Language, dict[str, float]] | None:
        """Every class's probability, or None when no model fits the text."""
        lang = language_of(text)
        model = self.model(lang) if lang else None
        if lang is None or model is None:
            return None
        rows = [row for row in map(model.weights.get, set(features(text, lang, extra))) if row is not None]
        logits = [sum(column) for column in zip(model.intercepts, *rows)]
        top = max(logits)
        exps = [math.exp((v - top) / model.scale) for v in logits]
        total = sum(exps)
        return lang, {label: e / total for label, e in zip(model.labels, exps)}

    def predict(self, text: str, extra: Iterable[str] = ()) -> Prediction | None:
        """The most probable class (ties: the artifact's label order), its probability, the
        probability of the classes that need comfort, and every class's."""
        scored = self.probabilities(text, extra)
        if scored is None:
            return None
        lang, probs = scored
        label = max(probs, key=probs.__getitem__)
        comfort = sum(probs.get(c, 0.0) for c in COMFORT_CLASSES)
        return Prediction(label=label, probability=round(probs[label], 6), language=lang,
                          comfort_probability=round(comfort, 6), probabilities=probs)

    def classify(self, text: str) -> tuple[str, float]:
        """``(label, probability)``; ``("neutral", 1.0)`` for text no model can read."""
        p = self.predict(text)
        return ("neutral", 1.0) if p is None else (p.label, p.probability)


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
