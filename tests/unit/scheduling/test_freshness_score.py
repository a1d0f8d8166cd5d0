from hypothesis import given
from hypothesis import strategies as st

from scheduling import GroupMessage, compute_freshness, freshness_score

from scheduling_fixtures import agent_turns

AGENTS = ["a", "b", "c"]
turns_ago = st.one_of(st.none(), st.integers(min_value=0, max_value=50))


@given(st.integers(min_value=0, max_value=60), turns_ago)
def test_freshness_stays_between_zero_and_one(replies, ago):
    assert 0.0 <= freshness_score(replies, ago) <= 1.0


@given(st.integers(min_value=0, max_value=60), turns_ago)
def test_more_recent_replies_never_raise_freshness(replies, ago):
    assert freshness_score(replies + 1, ago) <= freshness_score(replies, ago)


@given(st.integers(min_value=0, max_value=60), st.integers(min_value=0, max_value=50))
def test_freshness_recovers_with_turns_since_last_spoke(replies, ago):
    assert freshness_score(replies, ago + 1) >= freshness_score(replies, ago)
    assert freshness_score(replies, None) >= freshness_score(replies, ago)


history = st.lists(st.one_of(st.none(), st.sampled_from(AGENTS)), max_size=20)


@given(history, st.sampled_from(AGENTS))
def test_an_agent_speaking_again_never_gets_fresher(speakers, agent):
    before = compute_freshness(agent_turns(*speakers), AGENTS)[agent].freshness_score
    msgs = agent_turns(*speakers)
    msgs.append(GroupMessage(role="agent", seq=len(msgs) + 1, agent_id=agent))
    assert compute_freshness(msgs, AGENTS)[agent].freshness_score <= before


@given(history)
def test_a_user_turn_without_replies_never_makes_anyone_staler(speakers):
    before = compute_freshness(agent_turns(*speakers), AGENTS)
    after = compute_freshness(agent_turns(*speakers, None), AGENTS)
    assert all(after[a].freshness_score >= before[a].freshness_score for a in AGENTS)


def test_silent_agent_is_fully_fresh_and_has_no_last_spoke():
    fresh = compute_freshness(agent_turns("a", "a"), AGENTS)["b"]
    assert (fresh.recent_reply_count, fresh.last_spoke_turns_ago, fresh.freshness_score) == (0, None, 1.0)


def test_turns_since_last_spoke_are_counted_in_user_turns():
    fresh = compute_freshness(agent_turns("a", "b", None), AGENTS)
    assert fresh["a"].last_spoke_turns_ago == 2
    assert fresh["b"].last_spoke_turns_ago == 1
    assert compute_freshness(agent_turns("a"), AGENTS)["a"].last_spoke_turns_ago == 0


def test_only_the_last_window_of_messages_counts():
    msgs = agent_turns("a", "a", "a", *[None] * 12)
    fresh = compute_freshness(msgs, AGENTS, window=12)["a"]
    assert (fresh.recent_reply_count, fresh.last_spoke_turns_ago) == (0, None)
    assert compute_freshness(agent_turns("a", "a", "b"), AGENTS, window=12)["a"].recent_reply_count == 2


def test_messages_from_the_current_turn_on_are_ignored():
    msgs = agent_turns("a", None)
    current = msgs[-1].seq
    msgs.append(GroupMessage(role="agent", seq=current + 1, agent_id="b"))
    fresh = compute_freshness(msgs, AGENTS, current_user_seq=current)
    assert fresh["a"].last_spoke_turns_ago == 0
    assert fresh["b"].recent_reply_count == 0


def test_documented_example_values():
    assert freshness_score(1, 0) == 0.3704
    assert freshness_score(0, None) == 1.0
    assert freshness_score(4, 0) < freshness_score(1, 0) < freshness_score(1, 3)
