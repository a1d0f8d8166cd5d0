"""Token usage estimation for providers that do not report usage.

Budgets and analytics need a number even when a local server returns no ``usage``; a rough,
clearly flagged estimate (``estimated=True``) beats a silent zero. Rule of thumb: a CJK
character is about one token; other text is about four characters per token.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from app.llm.port import Usage

# Han (incl. extension A and compatibility), kana, Hangul syllables/jamo, CJK punctuation, fullwidth.
_CJK_RANGES = (
    (0x3000, 0x303F),
    (0x3040, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0x1100, 0x11FF),
    (0xAC00, 0xD7AF),
    (0xFF00, 0xFFEF),
)


_CJK = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES) + "]")


def is_cjk(ch: str) -> bool:
    return _CJK.match(ch) is not None


def cjk_count(text: str) -> int:
    """CJK characters in ``text`` (counted by the regex engine: prompts are long)."""
    return len(_CJK.findall(text))


def estimate_tokens(text: str) -> int:
    """CJK characters count one token each; the rest count one token per four characters."""
    if not text:
        return 0
    cjk = cjk_count(text)
    return cjk + math.ceil((len(text) - cjk) / 4)


def estimate_usage(input_texts: Iterable[str], output_text: str) -> Usage:
    return Usage(
        input_tokens=sum(estimate_tokens(t) for t in input_texts),
        output_tokens=estimate_tokens(output_text),
        estimated=True,
    )


def add_usage(a: Usage, b: Usage) -> Usage:
    """Sum two usages; the total is estimated if either part was."""
    return Usage(
        input_tokens=a.input_tokens + b.input_tokens,
        output_tokens=a.output_tokens + b.output_tokens,
        estimated=a.estimated or b.estimated,
    )
