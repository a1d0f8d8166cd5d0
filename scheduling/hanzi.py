"""Traditional Chinese folded to simplified, character by character, for matching only.

The keyword cues and the offline emotion classifier are written and trained on simplified Chinese
(the Weibo, CLUE and CPED sources are mainland text); a user writing traditional characters
("我今天好難過") would otherwise meet unknown characters. ``fold_traditional`` maps each
traditional character (and each Taiwan or Hong Kong variant form) to its simplified one with the
table in ``t2s.txt`` (from OpenCC, see its header), so both scripts reach the same cues and
features. One character for one, so the text keeps its length and offsets; characters that are
also simplified ones (著, 后, 干) are not in the table and stay. Regional vocabulary (軟體 for 软件)
is not translated: that takes OpenCC's phrase tables, which a cue or a feature rarely needs.
The table is rebuilt with ``python -m scheduling.hanzi_table DICTIONARY_DIR > scheduling/t2s.txt`` from
OpenCC's dictionary folder (e.g. the ``opencc/dictionary`` of PyPI's opencc-python-reimplemented).
Stored text is never changed: the fold is applied where text is matched (``keywords.Cues``, the
classifier's ``prepare``). The few most recent results are kept, so the keyword sets and the
classifier reading one message fold it once.
"""

from __future__ import annotations

import functools
import importlib.resources

TABLE = "t2s.txt"


@functools.cache
def _table() -> dict[int, int]:
    text = importlib.resources.files("scheduling").joinpath(TABLE).read_text(encoding="utf-8")
    pairs = (line.split("\t") for line in text.splitlines() if line and not line.startswith("#"))
    return {ord(traditional): ord(simplified) for traditional, simplified in pairs}


@functools.lru_cache(maxsize=16)
def fold_traditional(text: str) -> str:
    """``text`` with every traditional character replaced by its simplified one (same length)."""
    return text.translate(_table())
