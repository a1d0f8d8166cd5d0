"""Reply order (``settings.replyOrder``) and mute: who is eligible, and who is next in line.

- ``natural`` (default): the seed's selection — mentions, then the model or the scorer.
- ``list``: round robin in the members' display order, starting after the member who spoke last
  (LettuceAI's round-robin; SillyTavern's list order with the turn's reply count as the cap).
- ``pooled``: everyone once before anyone twice. The pool is the members who have not spoken
  since it last emptied (read from the recent window); among them the scorer's ranking decides,
  so persona fit and freshness still count inside the rule.
- ``manual``: nobody replies on their own; only a mention or a member's force-talk does.

A **muted** member is never selected by the model, the scorer or an order, only by a mention or
by force-talk; it still witnesses the conversation. In ``list`` and ``pooled`` the model
selector is not asked: the order is the rule, recorded as ``selectedBy: "order"``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal

ReplyOrder = Literal["natural", "list", "pooled", "manual"]
REPLY_ORDERS: tuple[str, ...] = ("natural", "list", "pooled", "manual")


def eligible(member_ids: Sequence[str], muted: Collection[str]) -> list[str]:
    """Members the turn may choose on its own (not muted), in display order."""
    return [m for m in member_ids if m not in muted]


def list_order(member_ids: Sequence[str], recent_speakers: Sequence[str], muted: Collection[str],
               count: int, *, taken: Collection[str] = ()) -> list[str]:  # fmt: skip
    """The next ``count`` eligible members after the newest speaker, in display order, cycling.
    ``recent_speakers``: agent ids of the recent agent messages, oldest first."""
    ids = list(member_ids)
    last = next((s for s in reversed(recent_speakers) if s in ids), None)
    start = ids.index(last) + 1 if last is not None else 0
    ring = ids[start:] + ids[:start]
    out = [m for m in ring if m not in muted and m not in taken]
    return out[: max(0, count)]


def pool(member_ids: Sequence[str], recent_speakers: Sequence[str], muted: Collection[str]) -> list[str]:
    """Eligible members who have not spoken since everyone last had (display order). A full round
    empties the pool and it refills at once, so it is never empty while someone is eligible."""
    everyone = set(eligible(member_ids, muted))
    spoken: set[str] = set()
    for speaker in recent_speakers:
        if speaker in everyone:
            spoken.add(speaker)
            if spoken >= everyone:
                spoken = set()
    return [m for m in member_ids if m in everyone and m not in spoken]


def pooled_order(member_ids: Sequence[str], recent_speakers: Sequence[str], muted: Collection[str],
                 ranked: Sequence[str], count: int, *, taken: Collection[str] = ()) -> list[str]:  # fmt: skip
    """Up to ``count`` members from the pool, best ranked first; when the pool has fewer than
    ``count``, it refills and the round goes on (never the same member twice in one turn)."""
    out: list[str] = []
    speakers = list(recent_speakers)
    while len(out) < count:
        available = [m for m in pool(member_ids, speakers, muted) if m not in taken and m not in out]
        if not available:
            break
        best = min(available, key=lambda m: ranked.index(m) if m in ranked else len(ranked))
        out.append(best)
        speakers.append(best)
    return out


def order_pick(order: ReplyOrder, member_ids: Sequence[str], recent_speakers: Sequence[str],
               muted: Collection[str], ranked: Sequence[str], count: int, *,
               taken: Collection[str] = ()) -> list[str]:  # fmt: skip
    """The members a ``list``/``pooled`` order puts next (none for ``manual``; ``natural`` is not
    an order pick and gives none either)."""
    if order == "list":
        return list_order(member_ids, recent_speakers, muted, count, taken=taken)
    if order == "pooled":
        return pooled_order(member_ids, recent_speakers, muted, ranked, count, taken=taken)
    return []
