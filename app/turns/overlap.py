"""How much of one text another one copies: the measure behind the echo, repeat and prompt-leak checks.

Texts are compared as **tokens**: each CJK character is a token, each run of other letters and
digits (a word) is a token; case, width, punctuation and spaces are ignored. So ``笑死我了！`` and
``笑死我了`` match, and English is compared word by word (three shared letters mean nothing, three
shared words do).

``covered(a, b)`` is the share of ``a``'s tokens that ``b`` repeats in runs of at least
``min_run`` tokens in the same order. A reply that quotes a few words of the user (``超好笑的视频？``)
covers little of the user's line; a reply that is the user's line again covers all of it.
``longest_run(a, b)`` is the longest such run, for fragments of the prompt.
"""

from __future__ import annotations

import difflib
import unicodedata
from functools import lru_cache

from story.auto_reply.text import is_cjk


@lru_cache(maxsize=4096)
def tokens(text: str) -> tuple[str, ...]:
    out: list[str] = []
    word: list[str] = []
    for ch in unicodedata.normalize("NFKC", text).casefold():
        if is_cjk(ch):
            if word:
                out.append("".join(word))
                word = []
            out.append(ch)
        elif ch.isalnum():
            word.append(ch)
        elif word:
            out.append("".join(word))
            word = []
    if word:
        out.append("".join(word))
    return tuple(out)


def _blocks(a: tuple[str, ...], b: tuple[str, ...]) -> list[difflib.Match]:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()


def covered(a: str, b: str, *, min_run: int = 3) -> float:
    """Share of ``a``'s tokens found in ``b`` in same-order runs of ``min_run`` tokens or more."""
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return 0.0
    return sum(m.size for m in _blocks(ta, tb) if m.size >= min_run) / len(ta)


def longest_run(a: str, b: str) -> int:
    """The longest run of tokens ``a`` and ``b`` share, in tokens."""
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return 0
    return difflib.SequenceMatcher(None, ta, tb, autojunk=False).find_longest_match(0, len(ta), 0, len(tb)).size
