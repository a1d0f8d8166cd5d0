"""Train the offline emotion classifier artifact ``lexicon.json`` (read by ``classifier.py``).

Run::

    python -m scheduling.emotion.train_lexicon --data /work/shared/data --out scheduling/emotion/lexicon.json

Deterministic: fixed seeds, sorted vocabularies, lbfgs logistic regression, sorted JSON keys.
Only this module uses scikit-learn, and only inside functions, so ``scheduling`` imports without it.

Data (``<data>/emotion/``, see its README)
------------------------------------------
* ``cped_zh_train.csv``: Chinese TV-series utterances (CPED), column ``Emotion``.
* ``goemotions_en_train.tsv``: English Reddit comments (GoEmotions), multi-label ids into
  ``goemotions_labels.txt``.

Label mapping to the project's emotion set
------------------------------------------
CPED (``CPED_MAP``)::

    neutral → neutral      anger, disgust → angry      depress, sadness → sad
    happy, relaxed, grateful → happy                   worried, fear → anxious
    negative-other, positive-other, astonished → dropped (no counterpart in the project's set)

GoEmotions (``GOEMOTIONS_MAP``; a comment is kept when its labels map to exactly one class)::

    neutral → neutral
    anger, annoyance, disgust → angry
    sadness, grief, disappointment, remorse → sad
    fear, nervousness → anxious
    confusion → confused
    amusement → playful
    joy, excitement, gratitude, admiration, love, optimism, pride, relief → happy
        ("love" in GoEmotions is mostly "I love this", not romance)
    approval, disapproval, caring, curiosity, desire, embarrassment, realization, surprise → dropped

Neither set has lonely, stressed or romantic (and CPED has no confused or playful): those stay
with the keyword rules, which the classifier never overrides (see ``fallback.py``).

Splits and model
----------------
CPED is split by ``Dialogue_ID`` (70 % train / 15 % validation / 15 % test dialogues, shuffled
with seed ``SEED``) so no dialogue straddles the splits; GoEmotions by comment, same proportions
and seed. Per language: binary n-gram features (``classifier.features``: character 1–2-grams for
Chinese, word 1–2-grams for English), the ``VOCAB`` most frequent n-grams of the training split
(document frequency ≥ 2), multinomial ``LogisticRegression`` (lbfgs, ``C``; unweighted classes,
which kept accuracy better than balanced weights at equal macro-F1 on validation), trained on the
train split only. Coefficients are exported as integers ×
``SCALE``; the figures below are measured with the exported artifact through the runtime code.
The two thresholds of ``fallback.py`` are chosen on the validation split (``tune``); the figures
are on the test split, which neither training nor tuning saw.

Held-out test figures (``python -m scheduling.emotion.train_lexicon``, full data)
--------------------------------------------------------------------------------
Primary emotion vs the mapped gold label; macro-F1 over the dataset's mapped classes::

                                      test rows   accuracy   macro-F1
    zh  CPED (5 classes)  heuristics          3389      0.327      0.113
                          + classifier        3389      0.338      0.202
    en  GoEmotions (7)    heuristics           624      0.484      0.393
                          + classifier         624      0.673      0.540

    tuned thresholds: zh 0.40 / override 0.65; en 0.40 / override 0.55
    artifact: 3000 zh + 2000 en n-grams, about 170 KB

The same figures are stored in the artifact (``info.heldout_test``) and printed by every run.

The CPED labels come from acted multimodal dialogue (tone and faces), so text alone caps what any
text model reaches there; the gain is mostly recall on lines without an emotion keyword.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from scheduling.emotion.classifier import (
    ARTIFACT_FORMAT, EmotionClassifier, Language, Prediction, decode_lexicon, features,
)
from scheduling.emotion.fallback import fallback_emotion

SEED = 20250101
SPLIT = (0.70, 0.15)  # train, validation; the rest is test
VOCAB: dict[Language, int] = {"zh": 3000, "en": 2000}
C: dict[Language, float] = {"zh": 0.3, "en": 0.3}
SCALE = 1000
# Candidate thresholds. Floor 0.40: a label the classifier is less than 40 % sure of never replaces
# "neutral" (chat messages are more often neutral than the acted dialogue of CPED).
THRESHOLDS = tuple(round(0.40 + 0.05 * i, 2) for i in range(12))  # 0.40 .. 0.95
OVERRIDES = (*tuple(round(0.50 + 0.05 * i, 2) for i in range(10)), 1.01)  # 1.01: never override

CPED_MAP: dict[str, str | None] = {
    "neutral": "neutral",
    "anger": "angry", "disgust": "angry",
    "depress": "sad", "sadness": "sad",
    "happy": "happy", "relaxed": "happy", "grateful": "happy",
    "worried": "anxious", "fear": "anxious",
    "negative-other": None, "positive-other": None, "astonished": None,
}
GOEMOTIONS_MAP: dict[str, str | None] = {
    "neutral": "neutral",
    "anger": "angry", "annoyance": "angry", "disgust": "angry",
    "sadness": "sad", "grief": "sad", "disappointment": "sad", "remorse": "sad",
    "fear": "anxious", "nervousness": "anxious",
    "confusion": "confused",
    "amusement": "playful",
    "joy": "happy", "excitement": "happy", "gratitude": "happy", "admiration": "happy", "love": "happy",
    "optimism": "happy", "pride": "happy", "relief": "happy",
    "approval": None, "disapproval": None, "caring": None, "curiosity": None, "desire": None,
    "embarrassment": None, "realization": None, "surprise": None,
}

Item = tuple[str, str, str]  # (group for splitting, text, mapped label)


def load_cped(path: Path, limit: int | None) -> list[Item]:
    """Mapped CPED utterances; ``limit`` keeps the first N rows of the file (before mapping)."""
    items: list[Item] = []
    with path.open(encoding="utf-8-sig", newline="") as fh:
        for n, row in enumerate(csv.DictReader(fh)):
            if limit is not None and n >= limit:
                break
            label = CPED_MAP.get(row["Emotion"].strip())
            text = " ".join(row["Utterance"].split())
            if label and text:
                items.append((row["Dialogue_ID"], text, label))
    return items


def load_goemotions(path: Path, labels_path: Path, limit: int | None) -> list[Item]:
    """Mapped GoEmotions comments whose labels map to exactly one class; ``limit`` as for CPED."""
    names = labels_path.read_text(encoding="utf-8").split()
    items: list[Item] = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            if limit is not None and n >= limit:
                break
            text, ids, comment_id = line.rstrip("\n").split("\t")
            mapped = {GOEMOTIONS_MAP.get(names[int(i)]) for i in ids.split(",")} - {None}
            if len(mapped) == 1 and text.strip():
                items.append((comment_id, text.strip(), mapped.pop()))  # type: ignore[arg-type]
    return items


def split(items: list[Item], seed: int) -> tuple[list[Item], list[Item], list[Item]]:
    """Train/validation/test by group (dialogue for CPED, comment for GoEmotions)."""
    groups = sorted({g for g, _, _ in items})
    random.Random(seed).shuffle(groups)
    n_train, n_val = round(len(groups) * SPLIT[0]), round(len(groups) * SPLIT[1])
    part = {g: 0 for g in groups[:n_train]}
    part.update({g: 1 for g in groups[n_train:n_train + n_val]})
    part.update({g: 2 for g in groups[n_train + n_val:]})
    out: tuple[list[Item], list[Item], list[Item]] = ([], [], [])
    for item in items:
        out[part[item[0]]].append(item)
    return out


def vocabulary(texts: list[str], lang: Language, size: int) -> list[str]:
    """The ``size`` n-grams with the highest document frequency (≥ 2); ties alphabetical."""
    df: Counter[str] = Counter()
    for text in texts:
        df.update(set(features(text, lang)))
    ranked = sorted((g for g, c in df.items() if c >= 2), key=lambda g: (-df[g], g))
    return sorted(ranked[:size])


def train_model(train: list[Item], lang: Language, vocab_size: int, c: float) -> dict[str, Any]:
    """Fit the logistic regression; returns the artifact's model dict (thresholds still open)."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    texts = [t for _, t, _ in train]
    y = [label for _, _, label in train]
    vocab = vocabulary(texts, lang, vocab_size)
    vectorizer = CountVectorizer(analyzer=lambda t: features(t, lang), vocabulary=vocab, binary=True)
    x = vectorizer.transform(texts)
    model = LogisticRegression(C=c, max_iter=3000, random_state=SEED)
    # One BLAS thread: reproducible sums, and far faster than oversubscribed threads on small data.
    with threadpool_limits(limits=1):
        model.fit(x, y)
    labels = [str(label) for label in model.classes_]
    weights: dict[str, list[int]] = {}
    for j, gram in enumerate(vocab):
        row = [int(round(float(model.coef_[k, j]) * SCALE)) for k in range(len(labels))]
        if any(row):
            weights[gram] = row
    return {
        "labels": labels,
        "intercepts": [round(float(b), 4) for b in model.intercept_],
        "scale": float(SCALE),
        "threshold": 1.01,
        "override_threshold": 1.01,
        "weights": weights,
    }


class _CachedClassifier(EmotionClassifier):
    """Memoises ``predict`` while the thresholds are tuned (predictions do not depend on them)."""

    __slots__ = ("cache",)

    def __init__(self, base: EmotionClassifier, cache: dict[str, Prediction | None]) -> None:
        super().__init__(base.lexicon)
        self.cache = cache

    def predict(self, text: str) -> Prediction | None:
        if text not in self.cache:
            self.cache[text] = super().predict(text)
        return self.cache[text]


def scores(gold: list[str], predicted: list[str], labels: list[str]) -> dict[str, float]:
    from sklearn.metrics import accuracy_score, f1_score

    return {
        "accuracy": round(float(accuracy_score(gold, predicted)), 4),
        "macro_f1": round(float(f1_score(gold, predicted, labels=labels, average="macro", zero_division=0)), 4),
        "n": len(gold),
    }


def evaluate(items: list[Item], classifier: EmotionClassifier | None, labels: list[str]) -> dict[str, float]:
    gold = [label for _, _, label in items]
    predicted = [fallback_emotion(text, classifier=classifier).primary_emotion for _, text, _ in items]
    return scores(gold, predicted, labels)


def tune(classifier: EmotionClassifier, lang: Language, val: list[Item], labels: list[str]) -> tuple[float, float]:
    """The threshold for neutral text first (overrides off), then the override threshold. Each is
    the candidate with the best validation mean of accuracy and macro-F1 among those whose accuracy
    is at least the heuristics' own (never trade accuracy for recall); ties: the higher value.
    Nothing qualifies → 1.01 (classifier off for that case)."""
    cache: dict[str, Prediction | None] = {}
    floor = evaluate(val, None, labels)["accuracy"]

    def objective(threshold: float, override: float) -> tuple[float, float]:
        tuned = _CachedClassifier(classifier.with_thresholds(lang, threshold, override), cache)
        r = evaluate(val, tuned, labels)
        return (r["accuracy"] + r["macro_f1"]) / 2 if r["accuracy"] >= floor else -1.0, threshold + override

    threshold = max((*THRESHOLDS, 1.01), key=lambda t: objective(t, 1.01))
    override = max(OVERRIDES, key=lambda o: objective(threshold, o))
    return threshold, override


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(data: Path, limit: int | None = None, log=print) -> dict[str, Any]:
    """Train both languages and return the artifact as a JSON-ready dict."""
    emotion_dir = data / "emotion"
    sources = {
        "zh": (emotion_dir / "cped_zh_train.csv", load_cped(emotion_dir / "cped_zh_train.csv", limit)),
        "en": (emotion_dir / "goemotions_en_train.tsv", load_goemotions(
            emotion_dir / "goemotions_en_train.tsv", emotion_dir / "goemotions_labels.txt", limit)),
    }
    models: dict[str, Any] = {}
    heldout: dict[str, Any] = {}
    for lang, (path, items) in sources.items():
        train, val, test = split(items, SEED)
        labels = sorted({label for _, _, label in items})
        model = train_model(train, lang, VOCAB[lang], C[lang])  # type: ignore[index]
        draft = EmotionClassifier(decode_lexicon(json.dumps({"format": ARTIFACT_FORMAT, "models": {lang: model}})))
        threshold, override = tune(draft, lang, val, labels)  # type: ignore[arg-type]
        model["threshold"], model["override_threshold"] = threshold, override
        final = draft.with_thresholds(lang, threshold, override)  # type: ignore[arg-type]
        before, after = evaluate(test, None, labels), evaluate(test, final, labels)
        models[lang] = model
        heldout[lang] = {
            "dataset": path.name, "sha256": sha256(path), "labels": labels,
            "rows": {"train": len(train), "validation": len(val), "test": len(test)},
            "heuristics": before, "heuristics_plus_classifier": after,
        }
        log(f"{lang}: {path.name} train/val/test {len(train)}/{len(val)}/{len(test)}, "
            f"{len(model['weights'])} n-grams, threshold {threshold}, override {override}")
        log(f"  test heuristics only:         accuracy {before['accuracy']:.3f}  macro-F1 {before['macro_f1']:.3f}")
        log(f"  test heuristics + classifier: accuracy {after['accuracy']:.3f}  macro-F1 {after['macro_f1']:.3f}")
    return {
        "format": ARTIFACT_FORMAT,
        "models": models,
        "info": {
            "trainer": "scheduling.emotion.train_lexicon", "seed": SEED, "limit": limit,
            "vocab": VOCAB, "C": C, "split": "70/15/15 train/validation/test; CPED by Dialogue_ID",
            "mapping": {"cped": CPED_MAP, "goemotions": GOEMOTIONS_MAP},
            "heldout_test": heldout,
        },
    }


def dumps(artifact: dict[str, Any]) -> str:
    return json.dumps(artifact, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/data"), help="folder holding emotion/")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("lexicon.json"))
    parser.add_argument("--limit", type=int, default=None, help="use only the first N rows of each dataset")
    args = parser.parse_args(argv)
    text = dumps(build(args.data, args.limit))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(text.encode('utf-8')) / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
