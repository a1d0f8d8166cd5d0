"""Builds ``t2s.txt`` (read by ``hanzi.py``) from OpenCC's dictionary folder::

    python -m scheduling.hanzi_table .venv/lib/python3.11/site-packages/opencc/dictionary > scheduling/t2s.txt

(after ``pip install opencc-python-reimplemented``, which the project does not depend on).
"""

from __future__ import annotations

import sys
from pathlib import Path


HEADER = """\
# Traditional Chinese characters (and Taiwan / Hong Kong variant forms) -> simplified, one per line:
# traditional<TAB>simplified. Read by scheduling/hanzi.py to fold text before keyword and classifier
# matching. Generated from OpenCC's dictionaries (TSCharacters.txt, TWVariantsRev.txt,
# HKVariantsRev.txt; https://github.com/BYVoid/OpenCC, Apache License 2.0) as shipped in PyPI's
# opencc-python-reimplemented 0.1.7: the first simplified candidate of each single character,
# without characters that are themselves simplified ones (keys of OpenCC's STCharacters.txt).
"""


def build_table(dictionaries: Path) -> str:
    """``t2s.txt`` from OpenCC's dictionary folder: each traditional character's first simplified
    candidate, then each regional variant mapped through its standard form; characters that are
    simplified ones too are left out."""

    def read(name: str) -> dict[str, list[str]]:
        lines = (dictionaries / name).read_text(encoding="utf-8").splitlines()
        return {key: value.split(" ") for key, value in (line.split("\t") for line in lines if line)}

    simplified = set(read("STCharacters.txt"))
    table = {t: c[0] for t, c in read("TSCharacters.txt").items()
             if len(t) == len(c[0]) == 1 and t != c[0] and t not in simplified}
    for name in ("TWVariantsRev.txt", "HKVariantsRev.txt"):
        for variant, standard in read(name).items():
            s = table.get(standard[0])  # a standard form that is itself simplified is no fold
            if s is not None and len(variant) == 1 and variant != s and variant not in simplified and variant not in table:
                table[variant] = s
    return HEADER + "".join(f"{t}\t{table[t]}\n" for t in sorted(table))


if __name__ == "__main__":
    sys.stdout.write(build_table(Path(sys.argv[1])))
