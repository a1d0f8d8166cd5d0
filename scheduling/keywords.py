"""Keyword cues in Chinese and English, matched the way each script needs.

Chinese has no word boundaries, so Chinese cues match as substrings, of the text folded to
simplified characters (``hanzi.fold_traditional``: "難過" is "难过"). English cues are regex
fragments matched case-insensitively at ASCII word boundaries (so "我很sad" still
matches) (a fragment may end in ``\\w*`` to
cover inflections, e.g. ``empath\\w*``). Every English fragment starts with a letter, so the
English patterns start at the text's first Latin letter and text without one skips them: tried
at every position of a long Chinese message they were most of the offline emotion detector's
time (``tests/perf/bench_emotion.py``, p99 per message 0.72 ms → 0.53 ms; the same hits).
"""

from __future__ import annotations

import functools
import re

from scheduling.hanzi import fold_traditional

# What an English fragment's first letter can match (IGNORECASE also takes "ſ" for s, "K" for k).
_LATIN = re.compile("[a-z]", re.IGNORECASE)


@functools.lru_cache(maxsize=16)
def _first_latin(text: str) -> int:
    """Where the first Latin letter is (-1: none); once per message for every cue set."""
    letter = _LATIN.search(text)
    return -1 if letter is None else letter.start()


class Cues:
    __slots__ = ("_zh", "_en")

    def __init__(self, zh: str = "", en: str = "") -> None:
        self._zh = re.compile(f"(?:{fold_traditional(zh)})") if zh else None
        self._en = re.compile(rf"(?<![A-Za-z0-9_'])(?:{en})(?![A-Za-z0-9_'])", re.IGNORECASE) if en else None

    def _searches(self, text: str) -> list[tuple[re.Pattern[str], str, int]]:
        """Each pattern with the text it reads and where to start: Chinese cues read the text
        folded to simplified; English cues start at the first Latin letter (the lookbehind still
        sees the character before it), or are skipped without one."""
        out = [(self._zh, fold_traditional(text), 0)] if self._zh is not None else []
        if self._en is not None and (start := _first_latin(text)) >= 0:
            out.append((self._en, text, start))
        return out

    def hits(self, text: str) -> list[str]:
        found: list[str] = []
        for pattern, subject, start in self._searches(text):
            found.extend(m.group(0) for m in pattern.finditer(subject, start))
        return found

    def search(self, text: str) -> bool:
        return any(pattern.search(subject, start) for pattern, subject, start in self._searches(text))
