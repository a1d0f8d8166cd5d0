import pytest

from scheduling import relationship_from_direct_chat, stage_for_message_count


@pytest.mark.parametrize(
    ("count", "stage", "score"),
    [
        (0, "new_connection", 0.25),
        (7, "new_connection", 0.25),
        (8, "warming_up", 0.52),
        (29, "warming_up", 0.52),
        (30, "trusted", 0.78),
        (79, "trusted", 0.78),
        (80, "close_bond", 0.95),
        (5000, "close_bond", 0.95),
    ],
)
def test_stage_and_score_follow_the_seed_thresholds(count, stage, score):
    rel = relationship_from_direct_chat(count)
    assert (stage_for_message_count(count), rel.stage, rel.score) == (stage, stage, score)


def test_last_interaction_is_carried_along_without_changing_the_stage():
    rel = relationship_from_direct_chat(30, last_message_at_ms=1_700_000_000_000)
    assert rel.stage == "trusted"
    assert rel.conversation_last_message_at_ms == 1_700_000_000_000
    assert rel.conversation_message_count == 30


def test_negative_counts_are_treated_as_no_direct_chat():
    assert relationship_from_direct_chat(-3).stage == "new_connection"
