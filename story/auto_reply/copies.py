"""How much of a line is the chat's earlier words given back.

A small model asked for the user's next line often hands back what it was shown: the companion's
sentence (``resays``), or a line pieced together from several earlier messages ("I'm feeling
really down today and I don't know why. I just got promoted, I'm so happy!", two of the user's own
lines, each under half of it), or an earlier message whole with a few words after it. All compare
comparison keys (case, width, spacing and punctuation ignored), so a changed comma hides nothing.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from .text import comparison_key

RESAY_SHARE = 0.5  # at least half the line is stretches of the other message(s)…
RESAY_BLOCK = {"wide": 4, "latin": 10}  # …each at least this long (characters of the comparison key)
WHOLE_MIN = {"wide": 8, "latin": 24}
"""An earlier message at least this long (comparison-key characters) found whole inside a line is
a copy however much the line adds: no user types their own last message, or a companion's, again
inside a new one. Shorter ones ("好的", "thank you so much") are words anyone says again."""


def wide(ch: str) -> bool:
    """Kana, Han or Hangul: words are not separated by spaces."""
    return "\u3040" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af" or "\uff00" <= ch <= "\uffef"


def _kind(key: str) -> str:
    return "wide" if any(wide(ch) for ch in key) else "latin"


def _covered(a: str, b: str) -> set[int]:
    """Positions of ``a`` inside stretches it shares with ``b`` that are long enough to be a copy."""
    block = RESAY_BLOCK[_kind(a)]
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return {i for m in matcher.get_matching_blocks() if m.size >= block for i in range(m.a, m.a + m.size)}


def resays(line: str, other: str) -> bool:
    """Half or more of ``line`` is long stretches of ``other``: the companion's sentence given
    back ("其实我应该先深呼吸几次，跟我说说你最担心哪一部分？" after "要不要先深呼吸几次，跟我说说你最担心哪一部分？").
    An answer that takes up a word or two of the question ("其实我最担心的是这次机会") stays under it."""
    a, b = comparison_key(line), comparison_key(other)
    if not a or not b:
        return False
    return len(_covered(a, b)) / len(a) >= RESAY_SHARE


def pieced_together(line: str, others: Iterable[str]) -> bool:
    """Half or more of ``line`` is long stretches of the ``others`` taken together (each stretch
    from one of them), while no single one of them makes up half: earlier lines stitched."""
    a = comparison_key(line)
    if not a:
        return False
    covered: set[int] = set()
    for other in others:
        b = comparison_key(other)
        if b:
            covered |= _covered(a, b)
    return len(covered) / len(a) >= RESAY_SHARE


def holds_whole(line: str, others: Iterable[str]) -> bool:
    """``line`` holds one of ``others`` whole (and is more than it), when that one is long
    enough (``WHOLE_MIN``) not to be a phrase anyone repeats."""
    a = comparison_key(line)
    for other in others:
        b = comparison_key(other)
        if b and b != a and len(b) >= WHOLE_MIN[_kind(b)] and b in a:
            return True
    return False
