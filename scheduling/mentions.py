"""Which agents the user named, in the order they were named.

Names and aliases are matched longest first, and a matched span is taken, so "Miala" is never
also read as "Mia" and "莉娅娜" never as "莉娅". Names with non-ASCII letters (Chinese) match as
plain substrings because Chinese has no word boundaries ("莉娅你怎么看" names 莉娅); ASCII names
match as whole words, case-insensitively. ``@Name`` needs no special case: ``@`` is a boundary.
Chinese names and text are compared in simplified characters (``hanzi.fold_traditional``, one
character for one, so spans hold): "阿樂" names 阿乐, and a traditional name is named in either script.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from scheduling.hanzi import fold_traditional
from scheduling.profiles import AgentProfile


def _pattern(name: str) -> re.Pattern[str]:
    escaped = re.escape(name)
    if name.isascii():
        return re.compile(rf"(?<![A-Za-z0-9_]){escaped}(?![A-Za-z0-9_])", re.IGNORECASE)
    return re.compile(re.escape(fold_traditional(name)))


def find_mentions(text: str, agents: Sequence[AgentProfile]) -> list[str]:
    """Agent ids in order of first appearance, each once."""
    names = sorted(
        {(alias.strip(), a.id) for a in agents for alias in (a.name, *a.aliases) if alias.strip()},
        key=lambda item: (-len(item[0]), item[0]),
    )
    text = fold_traditional(text)
    taken = [False] * len(text)
    hits: list[tuple[int, str]] = []
    for name, agent_id in names:
        for match in _pattern(name).finditer(text):
            start, end = match.span()
            if any(taken[start:end]):
                continue
            taken[start:end] = [True] * (end - start)
            hits.append((start, agent_id))
    ordered: list[str] = []
    for _, agent_id in sorted(hits):
        if agent_id not in ordered:
            ordered.append(agent_id)
    return ordered
