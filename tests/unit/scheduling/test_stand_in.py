"""The stand-in when every chosen reply was dropped: the best-ranked member not yet tried, never one resting."""

from scheduling.selection.scorer import CandidateScore
from scheduling.selection.stand_in import stand_in


def ranked(*ids: str) -> list[CandidateScore]:
    return [CandidateScore(agent_id=a, features={}, score=1.0 - i / 10, rank=i + 1) for i, a in enumerate(ids)]


def test_the_best_ranked_member_not_tried_stands_in_whatever_the_list_order():
    candidates = ranked("planner", "comforter", "joker")
    assert stand_in(candidates, tried={"planner"}) == "comforter"
    assert stand_in(list(reversed(candidates)), tried={"planner"}) == "comforter"
    assert stand_in(candidates, tried={"planner", "comforter"}) == "joker"


def test_a_resting_member_does_not_stand_in_and_with_nobody_left_there_is_none():
    candidates = ranked("planner", "comforter", "joker")
    assert stand_in(candidates, tried={"planner"}, resting=("comforter",)) == "joker"
    assert stand_in(candidates, tried={"planner", "joker"}, resting=("comforter",)) is None
    assert stand_in([], tried=set()) is None
