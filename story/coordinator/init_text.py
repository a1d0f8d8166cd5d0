"""Text an initializer's world must not carry: the material's own labels, a loop (a sentence said
twice, a phrase again and again: ``story.auto_reply.degenerate``); and threads that share a clue
or an invitation, of which only the first is taken. In the parts a world can do without (a
background, an undercurrent, a seed) such text leaves that part out (``usable``); in the
foreground and the lines it is a problem of the answer.

Qwen2.5-0.5B, asked for a Chinese world, wrote as a foreground summary "最近消息:\nRecent
messages:\nRecent messages:…" (the material's heading), "Headline: 冷静的分析师\nPersonality: …"
(the persona definition, labels and all), "客观的人会帮助我们找到共识，共同达成目标。" five times
in one summary, and "…她感到温暖和温暖的倾听者，被她的声音吸引，让她感到温暖和温暖的倾听者…" to the
end of its budget. The Actor is shown the stage and copies it. These are problems of the answer
(the host repairs once, then the initialisation fails honestly), never rewritten here.

The same model also gave every undercurrent and seed one clue and one invitation, and the saved
replies recited that clue to another member. A thread whose clue is another's can never be told
apart from it, so it is not taken (as a thread owned by the protected character is not): the
world keeps the first, and the Story starts. Asked to repair instead, the model wrote the copies
again in both attempts (a probe of four initialisations: one such, one with every background
summary the foreground's, two over the time budget), and that Story did not start.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TypeVar

from story.auto_reply.degenerate import degenerate_problem

T = TypeVar("T")

LABEL = re.compile(r"^[ \t]*([^\n:：]{1,24}?)[ \t]*[:：]", re.MULTILINE)
MIN_SHARED_CHARS = 8  # two threads sharing a text shorter than this (a name, a place) are not copies


def labels_in(text: str) -> set[str]:
    """The labels lines of ``text`` start with ("Recent messages", "Headline", "林溪", …), case folded."""
    return {m.group(1).strip().casefold() for m in LABEL.finditer(text) if m.group(1).strip()}


def _squash(text: str) -> str:
    """Letters and digits only, case folded: "找到共识的。" and " 找到共识的" are one text."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def text_problems(texts: Iterable[tuple[str, str]], material: str) -> list[str]:
    """``texts``: (field path, text) of one answer; ``material`` what the initializer was given."""
    labels = labels_in(material)
    problems: list[str] = []
    for path, text in texts:
        used = sorted(labels_in(text) & labels)
        if used:
            problems.append(f"{path} copies the material's label {used[0]!r}: write the world in your own words")
        if (loop := degenerate_problem(text)) is not None:
            problems.append(f"{path} loops ({loop.split(': ', 1)[-1]}): write it once, in a few words")
    return problems


def usable(items: Iterable[T], texts: Callable[[T], Iterable[str]], material: str) -> list[T]:
    """``items`` without those one of whose ``texts`` copies the material's labels or loops. A
    world starts without such a background or thread, as without a copied one: asked to repair a
    whole world for one bad thread, Qwen2.5-0.5B wrote a new bad one as often as not, and the
    initialisation then failed for a part the story did not need."""
    return [x for x in items if not text_problems((("", t) for t in texts(x)), material)]


def first_of_each(items: Iterable[T], texts: Callable[[T], Iterable[str]], seen: set[str]) -> list[T]:
    """``items`` without those sharing a text (``MIN_SHARED_CHARS`` or longer, spacing, punctuation
    and case aside) with one before them or in ``seen``; ``seen`` gains the texts of those kept."""
    kept = []
    for item in items:
        keys = {k for k in map(_squash, texts(item)) if len(k) >= MIN_SHARED_CHARS}
        if not keys & seen:
            kept.append(item)
            seen |= keys
    return kept
