"""Lore (world info): which entries join a speaking member's prompt. Pure: entries and window in,
the entries used out (issue 28; the way SillyTavern world info and LettuceAI lorebooks work).

An entry is **triggered** when
- it is enabled;
- it applies to the speaker: an agent's entry only to that agent's replies; a conversation's entry
  to every member, or only to those in its ``member_ids`` when that list is set;
- one of its ``keys`` appears in the window (case-insensitively; traditional Chinese matches
  simplified; a key that begins or ends with a Latin letter or digit matches there only at a word
  edge, so ``cat`` is not found in ``category``, while a Chinese key matches anywhere);
- and, when it has ``secondary_keys``, one of those appears too (an AND filter).

Triggered entries are taken highest ``priority`` first (ties: the entry id, so the choice is
stable) while their content fits the ``token_budget``; the first that does not fit ends the choice,
so a lower-priority entry never takes the place of a higher one. Tokens are estimated, no
tokenizer: a CJK character is one token, any other text four characters a token (rounded up).
A budget of 0 turns lore off.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

import msgspec

from scheduling.hanzi import fold_traditional

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_WORD = re.compile(r"[A-Za-z0-9]")


class LoreEntry(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    keys: tuple[str, ...]
    content: str
    secondary_keys: tuple[str, ...] = ()
    priority: int = 0
    enabled: bool = True
    agent_id: str | None = None  # an agent's entry: only its replies
    member_ids: tuple[str, ...] | None = None  # a conversation's entry: only these members (None: all)


class LoreUse(msgspec.Struct, frozen=True, kw_only=True):
    """An entry a reply's prompt got, and the keys that triggered it."""

    entry: LoreEntry
    keys: tuple[str, ...]
    tokens: int


def estimate_tokens(text: str) -> int:
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


def _fold(text: str) -> str:
    return fold_traditional(text).casefold()


def _found(key: str, window: str) -> bool:
    key = _fold(key.strip())
    if not key:
        return False
    head = r"(?<![a-z0-9])" if _WORD.match(key[0]) else ""
    tail = r"(?![a-z0-9])" if _WORD.match(key[-1]) else ""
    return re.search(head + re.escape(key) + tail, window) is not None


def applies_to(entry: LoreEntry, agent_id: str) -> bool:
    if entry.agent_id is not None:
        return entry.agent_id == agent_id
    return entry.member_ids is None or agent_id in entry.member_ids


def triggered(entry: LoreEntry, window: str) -> tuple[str, ...]:
    """The keys found (primary, then secondary); empty when the entry is not triggered.
    ``window`` is already folded (``_fold``)."""
    primary = tuple(k for k in entry.keys if _found(k, window))
    if not primary:
        return ()
    secondary = tuple(k for k in entry.secondary_keys if _found(k, window))
    if entry.secondary_keys and not secondary:
        return ()
    return primary + secondary


def select_lore(entries: Iterable[LoreEntry], window: Sequence[str], agent_id: str, token_budget: int) -> list[LoreUse]:
    """The entries a reply by ``agent_id`` gets, in the order they are injected."""
    if token_budget <= 0:
        return []
    text = _fold("\n".join(window))
    hits = [(e, keys) for e in entries if e.enabled and applies_to(e, agent_id) and (keys := triggered(e, text))]
    hits.sort(key=lambda hit: (-hit[0].priority, hit[0].id))
    used: list[LoreUse] = []
    left = token_budget
    for entry, keys in hits:
        tokens = estimate_tokens(entry.content)
        if tokens > left:
            break
        left -= tokens
        used.append(LoreUse(entry=entry, keys=keys, tokens=tokens))
    return used
