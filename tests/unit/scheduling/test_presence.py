"""Presence (issue 28): a member's slice of the history is the messages it witnessed."""

from __future__ import annotations

from scheduling.presence import Presence, was_present, witnessed
from scheduling.profiles import GroupMessage

A, B, C = "a", "b", "c"


def history() -> list[GroupMessage]:
    return [
        GroupMessage(role="user", seq=1, content="old, before presence"),  # present unknown
        GroupMessage(role="agent", seq=2, agent_id=A, content="old reply", present=None),
        GroupMessage(role="user", seq=3, content="before B joined", present=(A, C)),
        GroupMessage(role="agent", seq=4, agent_id=A, content="A answers", present=(A, C)),
        GroupMessage(role="user", seq=5, content="after B joined", present=(A, B, C)),
        GroupMessage(role="agent", seq=6, agent_id=B, content="B answers", present=(A, B, C)),
    ]


def seqs(messages: list[GroupMessage]) -> list[int]:
    return [m.seq for m in messages]


def test_a_member_added_later_sees_from_its_joining_on() -> None:
    assert seqs(witnessed(history(), B, joined_seq=4)) == [5, 6]


def test_a_member_there_from_the_start_sees_everything() -> None:
    assert seqs(witnessed(history(), A)) == [1, 2, 3, 4, 5, 6]
    assert seqs(witnessed(history(), C)) == [1, 2, 3, 4, 5, 6]


def test_history_all_shows_a_newcomer_the_whole_conversation() -> None:
    assert seqs(witnessed(history(), B, joined_seq=4, mode="all")) == [1, 2, 3, 4, 5, 6]


def test_messages_older_than_presence_are_seen_after_joined_seq() -> None:
    old = [GroupMessage(role="user", seq=s, content=str(s)) for s in range(1, 6)]
    assert seqs(witnessed(old, B, joined_seq=3)) == [4, 5]
    assert seqs(witnessed(old, A, joined_seq=0)) == [1, 2, 3, 4, 5]


def test_the_recorded_members_decide_over_joined_seq() -> None:
    """A member removed and added again: what it witnessed before it left stays, what was said
    while it was away does not."""
    msgs = [GroupMessage(role="user", seq=1, content="with B", present=(A, B)),
            GroupMessage(role="user", seq=2, content="without B", present=(A, C)),
            GroupMessage(role="user", seq=3, content="B is back", present=(A, B, C))]  # fmt: skip
    assert seqs(witnessed(msgs, B, joined_seq=2)) == [1, 3]


def test_a_member_always_witnessed_its_own_messages() -> None:
    assert was_present(B, seq=9, author_id=B, present=(A,), joined_seq=20)
    assert not was_present(B, seq=9, author_id=A, present=(A,), joined_seq=0)


def test_presence_keeps_each_members_joined_seq() -> None:
    presence = Presence(mode="sinceJoin", joined={B: 4})
    assert seqs(presence.window(history(), B)) == [5, 6]
    assert presence.missed(history(), B) == 4 and presence.missed(history(), A) == 0
    assert presence.sees(B, seq=3, author_id=None, present=(A, C)) is False
    assert seqs(Presence(mode="all", joined={B: 4}).window(history(), B)) == [1, 2, 3, 4, 5, 6]


def test_the_speaking_context_counts_what_each_member_missed() -> None:
    from scheduling import AgentProfile, build_speaking_context, fallback_emotion
    from scheduling.selection.prompt import format_speaking_context

    agents = [AgentProfile(id=a, name=a.upper(), display_order=i) for i, a in enumerate((A, B, C))]
    presence = Presence(mode="sinceJoin", joined={B: 4})
    context = build_speaking_context(agents, {}, history(), fallback_emotion("hi"), current_user_seq=7, presence=presence)
    assert {c.agent_id: c.missed_messages for c in context.agent_contexts} == {A: 0, B: 4, C: 0}
    assert context.for_agent(B).last_spoke_turns_ago == 0 and context.for_agent(A).recent_reply_count == 2
    text = format_speaking_context(context, agents)
    assert "missedMessages=4" in text and text.count("missedMessages") == 1
    everyone = build_speaking_context(agents, {}, history(), fallback_emotion("hi"), current_user_seq=7)
    assert all(c.missed_messages == 0 for c in everyone.agent_contexts)
