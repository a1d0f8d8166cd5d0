"""Deterministic quality checks on a reply before it is saved.

A reply fails when it is empty, over the length limit, a duplicate or near-duplicate of another
reply this turn, in the wrong script for the conversation language, or speaks as the user or
another agent (a ``Name:`` line). The agent's own ``Name:`` prefix is stripped, not failed.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

from story.auto_reply.text import comparison_key, expected_script, script_problem

NEAR_DUPLICATE_RATIO = 0.9
USER_LABELS = ("user", "用户", "ユーザー", "사용자")


def _label_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    alts = sorted({re.escape(n.strip()) for n in names if n.strip()}, key=len, reverse=True)
    if not alts:
        return None
    return re.compile(r"^\s*[@*【\[]?\s*(" + "|".join(alts) + r")\s*[】\]*]?\s*[:：]", re.IGNORECASE | re.MULTILINE)


def strip_own_label(text: str, own_names: Sequence[str]) -> str:
    pattern = _label_pattern(own_names)
    if pattern is None:
        return text.strip()
    match = pattern.match(text)
    return (text[match.end():] if match else text).strip()


def reply_problems(
    text: str,
    *,
    language: str,
    max_chars: int,
    other_names: Sequence[str],
    earlier_replies: Sequence[str],
) -> list[str]:
    """Every problem, each as ``code: detail`` (the code is what analytics groups by)."""
    problems: list[str] = []
    if not text.strip():
        return ["empty: the reply is empty"]
    if len(text) > max_chars:
        problems.append(f"too_long: {len(text)} > {max_chars} characters")
    key = comparison_key(text)
    for earlier in earlier_replies:
        other = comparison_key(earlier)
        if key == other:
            problems.append("duplicate: same text as another reply this turn")
            break
        if key and other and difflib.SequenceMatcher(None, key, other).ratio() >= NEAR_DUPLICATE_RATIO:
            problems.append("near_duplicate: almost the same as another reply this turn")
            break
    if (wrong := script_problem(text, expected_script(language))) is not None:
        problems.append(f"wrong_script: {wrong}")
    pattern = _label_pattern([*USER_LABELS, *other_names])
    if pattern is not None and (match := pattern.search(text)):
        problems.append(f"speaks_as_other: a line is labelled '{match.group(1)}:'")
    return problems


def problem_code(problem: str) -> str:
    return problem.split(":", 1)[0]
