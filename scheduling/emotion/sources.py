"""The labelled sources the offline emotion classifier is trained on, their label mapping and splits.

Read only by the trainer (``train_lexicon``) and the benchmark, never at run time. Files are in
``<data>/emotion/`` (see ``shared/data/README.md``).

Label mapping: every source onto the classifier's five classes
----------------------------------------------------------------
``happy / sad / angry / anxious / neutral``. The project's other emotions (lonely, stressed,
confused, romantic, playful) have no counterpart in any source; they come from the keyword rules
(``fallback.py``), which refine the classifier's class into its family (``classifier.FAMILY``).

* SMP2020-EWECT (usual and virus Weibo posts): neutral → neutral, happy → happy, angry → angry,
  sad → sad, fear → anxious; surprise dropped.
* CLUE emotion (short posts, no neutral class): happiness, like → happy; sadness → sad;
  anger, disgust → angry; fear → anxious; surprise dropped.
* CPED (TV dialogue): neutral → neutral; happy, relaxed, grateful → happy; depress, sadness →
  sad; anger, disgust → angry; worried, fear → anxious; negative-other, positive-other,
  astonished dropped.
* dair-ai emotion (first-person statements, no neutral class): joy, love → happy ("love" there
  is warmth: "i feel loved"); sadness → sad; anger → angry; fear → anxious; surprise dropped.
* GoEmotions (Reddit comments, multi-label): neutral → neutral; joy, amusement, excitement,
  gratitude, admiration, love, optimism, pride, relief → happy; sadness, grief, disappointment,
  remorse → sad; anger, annoyance, disgust → angry; fear, nervousness → anxious; approval,
  disapproval, caring, confusion, curiosity, desire, embarrassment, realization, surprise
  dropped. A comment is kept only when its labels map to exactly one class ("single-label").

"surprise" is dropped everywhere: it is as often good news as bad and the project has no such
emotion. The comfort-need gold label is ``label in {sad, angry, anxious}`` (``COMFORT_CLASSES``).

Splits (held out per source; seed ``SEED``)
-------------------------------------------
* CPED: by ``Dialogue_ID``, 70 / 15 / 15 % train / validation / test dialogues.
* SMP2020 usual, CLUE: one file each; by distinct text (a repeated post stays in one split),
  70 / 15 / 15 %.
* SMP2020 virus: its train file gives train / validation (85 / 15 %), its eval file is the test.
* dair-ai: train file → train / validation (85 / 15 %), its valid file is the test.
* GoEmotions: the full train split → train / validation (85 / 15 %); the dev split
  (``goemotions_en_train.tsv``, disjoint from it) is the test.

* Everyday chat lines (``chat_zh``, ``chat_en``; ``plain`` sources, see below): ``chat_lines/<lang>.txt``
  → train / validation (80 / 20 %, by text); ``chat_lines/<lang>_test.txt`` is the test.

Then any validation or test text that is also a training text of the same language (a repost, a
stock line such as "好的" in another CPED dialogue) is dropped: held out means not seen.

Everyday chat lines (``load_chat_lines``)
-----------------------------------------
Every labelled source above is emotional text (Weibo posts picked for an emotion task, TV drama,
statements that name a feeling), and the trainer's tuning on them always asks for less neutral.
A companion chat is mostly ordinary lines: "晚饭吃什么好呢", "你今天在干嘛", "I'm at the gym". Trained
on the sources alone, the zh model sent 17 of 60 such lines to the comforter or the mediator
("晚饭吃什么好呢" read angry at p=0.63: questions like "吃什么" are quarrels in TV drama). So the
project keeps its own small set of everyday lines, all labelled neutral, written by hand for this
purpose (food, weather, errands, work and school facts, travel, hobbies, pets, family, questions
to the companion, short acknowledgements), none naming a feeling. They are a ``plain`` source:
trained on like the others (weight ``train_lexicon.SOURCE_WEIGHT``), kept out of the tuning means
(a single class has no macro-F1 or comfort-need F1 worth averaging), and scored by their
false-alarm rate: the share that the offline path marks as needing comfort or de-escalation. The
test file was written first, before any model change, and was not edited afterwards; the training
file was written after, from a list of topics, without copying test lines (``_unseen`` drops any
exact repeat anyway).
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from scheduling.emotion.classifier import COMFORT_CLASSES as COMFORT
from scheduling.emotion.classifier import FAMILY  # noqa: F401  (re-exported for the trainer)

SEED = 20250101
CLASSES: tuple[str, ...] = ("angry", "anxious", "happy", "neutral", "sad")
COMFORT_CLASSES = frozenset(COMFORT)

SMP_MAP: dict[str, str | None] = {
    "neutral": "neutral", "happy": "happy", "angry": "angry", "sad": "sad", "fear": "anxious", "surprise": None,
}
CLUE_MAP: dict[str, str | None] = {
    "happiness": "happy", "like": "happy", "sadness": "sad", "anger": "angry", "disgust": "angry",
    "fear": "anxious", "surprise": None,
}
DAIR_MAP: dict[str, str | None] = {
    "joy": "happy", "love": "happy", "sadness": "sad", "anger": "angry", "fear": "anxious", "surprise": None,
}
CPED_MAP: dict[str, str | None] = {
    "neutral": "neutral",
    "happy": "happy", "relaxed": "happy", "grateful": "happy",
    "depress": "sad", "sadness": "sad",
    "anger": "angry", "disgust": "angry",
    "worried": "anxious", "fear": "anxious",
    "negative-other": None, "positive-other": None, "astonished": None,
}
GOEMOTIONS_MAP: dict[str, str | None] = {
    "neutral": "neutral",
    "joy": "happy", "amusement": "happy", "excitement": "happy", "gratitude": "happy", "admiration": "happy",
    "love": "happy", "optimism": "happy", "pride": "happy", "relief": "happy",
    "sadness": "sad", "grief": "sad", "disappointment": "sad", "remorse": "sad",
    "anger": "angry", "annoyance": "angry", "disgust": "angry",
    "fear": "anxious", "nervousness": "anxious",
    "approval": None, "disapproval": None, "caring": None, "confusion": None, "curiosity": None,
    "desire": None, "embarrassment": None, "realization": None, "surprise": None,
}
MAPPINGS = {"smp2020": SMP_MAP, "clue": CLUE_MAP, "cped": CPED_MAP, "dair": DAIR_MAP, "goemotions": GOEMOTIONS_MAP}

Item = tuple[str, str, str]  # (group for splitting, text, mapped label)


@dataclass
class Source:
    """One held-out source: its language, the classes its labels cover, and its three splits."""

    name: str
    lang: str
    files: list[str]
    classes: tuple[str, ...]
    train: list[Item] = field(default_factory=list)
    validation: list[Item] = field(default_factory=list)
    test: list[Item] = field(default_factory=list)
    # Everyday lines, all neutral: trained on, scored by false alarms, not in the tuning means.
    plain: bool = False


def _clean(text: str) -> str:
    return " ".join(str(text).split())


def _key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def _weibo(path: Path, limit: int | None) -> list[Item]:
    rows = json.loads(path.read_text(encoding="utf-8"))[:limit]
    items = [(_key(_clean(r["content"])), _clean(r["content"]), SMP_MAP[r["label"]]) for r in rows]
    return [i for i in items if i[1] and i[2]]  # type: ignore[misc]


def _jsonl(path: Path, limit: int | None, text_key: str, label_key: str, mapping: dict[str, str | None]) -> list[Item]:
    items: list[Item] = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            if limit is not None and n >= limit:
                break
            row = json.loads(line)
            text, label = _clean(row[text_key]), mapping[row[label_key]]
            if text and label:
                items.append((_key(text), text, label))
    return items


def _cped(path: Path, limit: int | None) -> list[Item]:
    items: list[Item] = []
    with path.open(encoding="utf-8-sig", newline="") as fh:
        for n, row in enumerate(csv.DictReader(fh)):
            if limit is not None and n >= limit:
                break
            label, text = CPED_MAP.get(row["Emotion"].strip()), _clean(row["Utterance"])
            if label and text:
                items.append((row["Dialogue_ID"], text, label))
    return items


def _goemotions(path: Path, names: list[str], limit: int | None) -> list[Item]:
    items: list[Item] = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            if limit is not None and n >= limit:
                break
            text, ids, comment_id = line.rstrip("\n").split("\t")
            mapped = {GOEMOTIONS_MAP[names[int(i)]] for i in ids.split(",")} - {None}
            if len(mapped) == 1 and text.strip():
                items.append((comment_id, _clean(text), mapped.pop()))  # type: ignore[arg-type]
    return items


def split(items: list[Item], shares: tuple[float, ...], seed: int = SEED) -> list[list[Item]]:
    """Items by group into ``len(shares) + 1`` parts (the last takes the rest); groups shuffled
    with ``seed`` after sorting, so the split depends only on the data and the seed."""
    groups = sorted({g for g, _, _ in items})
    random.Random(seed).shuffle(groups)
    part: dict[str, int] = {}
    start = 0
    for k, share in enumerate(shares):
        stop = start + round(len(groups) * share)
        part.update({g: k for g in groups[start:stop]})
        start = stop
    part.update({g: len(shares) for g in groups[start:]})
    out: list[list[Item]] = [[] for _ in range(len(shares) + 1)]
    for item in items:
        out[part[item[0]]].append(item)
    return out


def load_sources(data: Path, limit: int | None = None) -> list[Source]:
    """Every source with its splits; ``limit`` keeps the first N rows of each file (for quick runs)."""
    d = data / "emotion"
    names = (d / "goemotions_labels.txt").read_text(encoding="utf-8").split()
    five, four = CLASSES, tuple(c for c in CLASSES if c != "neutral")
    sources: list[Source] = []

    usual = Source("smp2020_usual", "zh", ["smp2020_zh_usual_eval.json"], five)
    usual.train, usual.validation, usual.test = split(_weibo(d / usual.files[0], limit), (0.70, 0.15))
    sources.append(usual)

    virus = Source("smp2020_virus", "zh", ["smp2020_zh_virus_train.json", "smp2020_zh_virus_eval.json"], five)
    virus.train, virus.validation = split(_weibo(d / virus.files[0], limit), (0.85,))
    virus.test = _weibo(d / virus.files[1], limit)
    sources.append(virus)

    clue = Source("clue", "zh", ["clue_zh_valid.jsonl"], four)
    clue.train, clue.validation, clue.test = split(_jsonl(d / clue.files[0], limit, "content", "label", CLUE_MAP),
                                                   (0.70, 0.15))
    sources.append(clue)

    cped = Source("cped", "zh", ["cped_zh_train.csv"], five)
    cped.train, cped.validation, cped.test = split(_cped(d / cped.files[0], limit), (0.70, 0.15))
    sources.append(cped)

    dair = Source("dair", "en", ["dair_en_train.jsonl", "dair_en_valid.jsonl"], four)
    dair.train, dair.validation = split(_jsonl(d / dair.files[0], limit, "text", "label_text", DAIR_MAP), (0.85,))
    dair.test = _jsonl(d / dair.files[1], limit, "text", "label_text", DAIR_MAP)
    sources.append(dair)

    go = Source("goemotions", "en", ["goemotions_en_train_full.tsv", "goemotions_en_train.tsv"], five)
    go.train, go.validation = split(_goemotions(d / go.files[0], names, limit), (0.85,))
    go.test = _goemotions(d / go.files[1], names, limit)
    sources.append(go)
    return _unseen(sources + load_chat_lines())


CHAT_LINES = Path(__file__).with_name("chat_lines")


def _lines(path: Path) -> list[Item]:
    texts = dict.fromkeys(_clean(line) for line in path.read_text(encoding="utf-8").splitlines())
    return [(_key(text), text, "neutral") for text in texts if text]


def load_chat_lines(folder: Path = CHAT_LINES) -> list[Source]:
    """The everyday chat lines of both languages as ``plain`` sources (see the module docstring)."""
    out = []
    for lang in ("zh", "en"):
        s = Source(f"chat_{lang}", lang, [f"{lang}.txt", f"{lang}_test.txt"], ("neutral",), plain=True)
        s.train, s.validation = split(_lines(folder / s.files[0]), (0.80,))
        s.test = _lines(folder / s.files[1])
        out.append(s)
    return out


def _unseen(sources: list[Source]) -> list[Source]:
    """Drop from validation and test every text that is also a training text of the same language
    (any source): reposts and stock lines ("[心][心]", "好的") would otherwise be scored as unseen."""
    seen: dict[str, set[str]] = {}
    for s in sources:
        seen.setdefault(s.lang, set()).update(text for _, text, _ in s.train)
    for s in sources:
        s.validation = [i for i in s.validation if i[1] not in seen[s.lang]]
        s.test = [i for i in s.test if i[1] not in seen[s.lang]]
    return sources
