"""Keyword cues in Chinese and English, matched the way each script needs.

Chinese has no word boundaries, so Chinese cues match as substrings. English cues are regex
fragments matched case-insensitively at ASCII word boundaries (so "我很sad" still
matches) (a fragment may end in ``\\w*`` to
cover inflections, e.g. ``empath\\w*``).
"""

from __future__ import annotations

import re


class Cues:
    __slots__ = ("_zh", "_en")

    def __init__(self, zh: str = "", en: str = "") -> None:
        self._zh = re.compile(f"(?:{zh})") if zh else None
        self._en = re.compile(rf"(?<![A-Za-z0-9_'])(?:{en})(?![A-Za-z0-9_'])", re.IGNORECASE) if en else None

    def hits(self, text: str) -> list[str]:
        found: list[str] = []
        for pattern in (self._zh, self._en):
            if pattern is not None:
                found.extend(m.group(0) for m in pattern.finditer(text))
        return found

    def search(self, text: str) -> bool:
        return any(p is not None and p.search(text) for p in (self._zh, self._en))
