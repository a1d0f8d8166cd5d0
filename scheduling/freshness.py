"""Freshness: how much an agent has spoken lately, so one agent does not hog the group.

The window is the last ``window`` messages (users' and agents') of the group history *before*
the current user message. For each agent:

- ``recentReplyCount`` r: its messages in the window;
- ``lastSpokeTurnsAgo`` t: user messages after its last message in the window (0 = it spoke in
  the previous turn), ``None`` if it did not speak in the window;
- ``freshnessScore`` = recovery(t) / (1 + 0.35·r), with recovery(t) = 1 − 0.5·e^(−t/2) and
  recovery(None) = 1.

So an agent silent for the whole window scores 1.0; one reply in the previous turn scores
0.37; the same reply three turns ago 0.66; four replies ending last turn 0.21. The score never
rises with r and never falls with t, and stays in [0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import msgspec

from scheduling.profiles import GroupMessage

DEFAULT_WINDOW = 12
CROWDING_PER_REPLY = 0.35
RECOVERY_DIP = 0.5
RECOVERY_TURNS = 2.0


class Freshness(msgspec.Struct, frozen=True, rename="camel"):
    recent_reply_count: int
    last_spoke_turns_ago: int | None
    freshness_score: float


def freshness_score(recent_reply_count: int, last_spoke_turns_ago: int | None) -> float:
    recovery = 1.0 if last_spoke_turns_ago is None else (
        1.0 - RECOVERY_DIP * math.exp(-max(0, last_spoke_turns_ago) / RECOVERY_TURNS)
    )
    return round(recovery / (1.0 + CROWDING_PER_REPLY * max(0, recent_reply_count)), 4)


def compute_freshness(
    messages: Sequence[GroupMessage],
    agent_ids: Iterable[str],
    *,
    window: int = DEFAULT_WINDOW,
    current_user_seq: int | None = None,
) -> dict[str, Freshness]:
    """Freshness per agent id. Messages at or after ``current_user_seq`` are ignored, so the
    caller may pass history that already contains the message being answered."""
    history = sorted(
        (m for m in messages if current_user_seq is None or m.seq < current_user_seq), key=lambda m: m.seq,
    )
    recent = history[-window:] if window > 0 else []
    counts: dict[str, int] = {}
    turns_ago: dict[str, int] = {}
    user_turns_after = 0
    for message in reversed(recent):
        if message.role == "user":
            user_turns_after += 1
        elif message.agent_id is not None:
            counts[message.agent_id] = counts.get(message.agent_id, 0) + 1
            turns_ago.setdefault(message.agent_id, user_turns_after)
    result = {}
    for agent_id in agent_ids:
        r, t = counts.get(agent_id, 0), turns_ago.get(agent_id)
        result[agent_id] = Freshness(recent_reply_count=r, last_spoke_turns_ago=t, freshness_score=freshness_score(r, t))
    return result
