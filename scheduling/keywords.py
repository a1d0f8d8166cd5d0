"""Keyword cues in Chinese and English, matched the way each script needs.

Chinese has no word boundaries, so Chinese cues match as substrings. English cues are regex
fragments matched case-insensitively at ASCII word boundaries (so "我很sad" still
matches) (a fragment may end in ``\\w*`` to
cover inflections, e.g. ``empath\\w*``). Every English fragment starts with a letter, so text
without any Latin letter skips the English patterns: tried at every position of a long Chinese
message they were most of the offline emotion detector's time (``tests/perf/bench_emotion.py``,
p99 per message 0.72 ms → 0.53 ms with the skip; the same hits).
"""

from __future__ import annotations

import re

# What an English fragment's first letter can match (IGNORECASE also takes "ſ" for s, "K" for k).
_LATIN = re.compile("[a-z]", re.IGNORECASE)


class Cues:
    __slots__ = ("_zh", "_en")

    def __init__(self, zh: str = "", en: str = "") -> None:
        self._zh = re.compile(f"(?:{zh})") if zh else None
        self._en = re.compile(rf"(?<![A-Za-z0-9_'])(?:{en})(?![A-Za-z0-9_'])", re.IGNORECASE) if en else None

    def _patterns(self, text: str) -> tuple[re.Pattern[str], ...]:
        latin = self._en is not None and _LATIN.search(text) is not None
        return tuple(p for p in (self._zh, self._en if latin else None) if p is not None)

    def hits(self, text: str) -> list[str]:
        found: list[str] = []
        for pattern in self._patterns(text):
            found.extend(m.group(0) for m in pattern.finditer(text))
        return found

    def search(self, text: str) -> bool:
        return any(p.search(text) for p in self._patterns(text))
