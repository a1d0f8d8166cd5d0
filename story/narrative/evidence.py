"""Checking a settlement claim's quote against the accepted prose, in code.

A model paraphrases punctuation and character width freely (``"Hello, world"`` vs
``“hello world”``, full-width ``ＡＢＣ`` vs ``ABC``), so both sides are normalised before the
substring test: Unicode NFKC (width), case folding, and every whitespace and punctuation or
symbol character dropped. The other way round, a two-character quote would match almost any
prose, so a quote must be long enough *relative to what it proves*: half the normalised length
of the goal (or line direction) it claims, never under ``MIN_QUOTE_CHARS`` and never required
to be over ``MAX_REQUIRED_CHARS`` (a long goal may be shown by a short decisive line).
"""

from __future__ import annotations

import unicodedata

MIN_QUOTE_CHARS = 6
MAX_REQUIRED_CHARS = 24
QUOTE_RATIO = 0.5


def normalise(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if not ch.isspace() and unicodedata.category(ch)[0] not in "PSZC")


def required_chars(claimed: str) -> int:
    """The shortest normalised quote that may prove a claim about ``claimed`` (a goal's gist)."""
    return max(MIN_QUOTE_CHARS, min(MAX_REQUIRED_CHARS, int(len(normalise(claimed)) * QUOTE_RATIO)))


def quote_problem(prose: str, quote: str, claimed: str = "") -> str | None:
    """``None`` when ``quote`` proves the claim; else why not (for the diagnostic)."""
    q = normalise(quote)
    need = required_chars(claimed)
    if len(q) < need:
        return f"quote too short ({len(q)} of {need} characters after normalisation)"
    if q not in normalise(prose):
        return "quote not found in the accepted prose"
    return None
