"""Who answers when every chosen reply of a group turn was dropped by the quality checks.

A turn that ends with no reply at all (``all_replies_dropped``) is the worst a user can get from a
group: on Qwen2.5-0.5B, one reply a turn with the Story on, three of four turns ended so in one
run while another member could still speak. The best-ranked candidate not yet tried this turn
answers instead, once; a member resting after an auto turn does not. Pure: the caller decides
when a stand-in is allowed (not for a member the user named, nor in a direct chat).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from scheduling.selection.scorer import CandidateScore


def stand_in(candidates: Sequence[CandidateScore], tried: Collection[str], resting: Collection[str] = ()) -> str | None:
    """The agent id of the best-ranked candidate neither ``tried`` nor ``resting``; None if none is left."""
    for candidate in sorted(candidates, key=lambda c: c.rank):
        if candidate.agent_id not in tried and candidate.agent_id not in resting:
            return candidate.agent_id
    return None
