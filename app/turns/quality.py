"""Deterministic quality checks on a reply before it is saved.

A reply fails when it is empty, degenerate (punctuation only, or looping on a character or phrase:
see ``degenerate``), over the length limit, a duplicate or near-duplicate of another reply this
turn, in the wrong script for the conversation language, or speaks as the user or another agent (a
``Name:`` line). The agent's own ``Name:`` prefix is stripped, not failed.

When every reply of a turn is dropped, the turn fails with ``AllRepliesDropped``
(``all_replies_dropped``), whose details name the problem codes per agent.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from typing import Any

from app.errors import AppError
from app.turns.degenerate import degenerate_problem
from story.auto_reply.text import comparison_key, expected_script, script_problem

NEAR_DUPLICATE_RATIO = 0.9
WRONG_SCRIPT = "wrong_script"
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
    if (degenerate := degenerate_problem(text)) is not None:
        problems.append(degenerate)
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
        problems.append(f"{WRONG_SCRIPT}: {wrong}")
    pattern = _label_pattern([*USER_LABELS, *other_names])
    if pattern is not None and (match := pattern.search(text)):
        problems.append(f"speaks_as_other: a line is labelled '{match.group(1)}:'")
    return problems


def problem_code(problem: str) -> str:
    return problem.split(":", 1)[0]


class AllRepliesDropped(AppError):
    """Every reply of a turn was dropped. ``details.agents`` lists, per agent (and reply kind), the
    problem codes that dropped its reply and the full problem texts."""

    code = "all_replies_dropped"

    def __init__(self, dropped: list[tuple[str, str, list[str]]]) -> None:
        agents = [
            {"agentId": agent_id, "replyKind": kind, "problems": [problem_code(p) for p in problems],
             "reasons": problems}
            for agent_id, kind, problems in dropped
        ]  # fmt: skip
        summary = "; ".join(f"{a['agentId']}: {', '.join(a['problems']) or 'unknown'}" for a in agents)
        super().__init__(f"every reply was dropped ({summary})", details={"agents": agents})

    def record(self) -> dict[str, Any]:
        """The turn's ``error`` field: ``{code, message, details}``."""
        return {"code": self.code, "message": self.message, "details": self.details}
