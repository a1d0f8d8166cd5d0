"""Text an initializer's world must not carry: the material's own labels, a sentence said twice,
one text in two places.

Qwen2.5-0.5B, asked for a Chinese world, wrote as a foreground summary "最近消息:\\nRecent
messages:\\nRecent messages:…" (the material's heading), "Headline: 冷静的分析师\\nPersonality: …"
(the persona definition, labels and all), "客观的人会帮助我们找到共识，共同达成目标。" five times
in one summary, and one clue for two undercurrents. The Actor is shown the stage and copies it:
the saved replies then recited the clue to another member. These are problems of the answer (the
host repairs once, then the initialisation fails honestly), never rewritten here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

LABEL = re.compile(r"^[ \t]*([^\n:：]{1,24}?)[ \t]*[:：]", re.MULTILINE)
SENTENCE = re.compile(r"[^。！？!?.\n]+")
MIN_SENTENCE_CHARS = 6  # a sentence shorter than this may repeat on purpose ("好。好。")
MIN_SHARED_CHARS = 8  # two items sharing a text shorter than this (a name, a place) are not a copy


def material_labels(material: str) -> set[str]:
    """The labels lines of ``material`` start with ("Recent messages", "Headline", "林溪", …)."""
    return {m.group(1).strip().casefold() for m in LABEL.finditer(material) if m.group(1).strip()}


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text).casefold()


def text_problems(texts: Iterable[tuple[str, str]], material: str) -> list[str]:
    """``texts``: (field path, text) of one answer; ``material`` what the initializer was given."""
    labels = material_labels(material)
    problems: list[str] = []
    seen: dict[str, str] = {}
    for path, text in texts:
        used = sorted({m.group(1).strip().casefold() for m in LABEL.finditer(text)} & labels)
        if used:
            problems.append(f"{path} copies the material's label {used[0]!r}: write the world in your own words")
        sentences = [s for s in (_squash(s) for s in SENTENCE.findall(text)) if len(s) >= MIN_SENTENCE_CHARS]
        if len(sentences) != len(set(sentences)):
            problems.append(f"{path} says the same sentence twice")
        key = _squash(text)
        if len(key) >= MIN_SHARED_CHARS:
            if key in seen:
                problems.append(f"{path} is the same text as {seen[key]}: each item needs its own")
            else:
                seen[key] = path
    return problems
