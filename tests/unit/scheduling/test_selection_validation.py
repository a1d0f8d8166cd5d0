import msgspec
import pytest

from scheduling import SelectionRejected, SpeakerSelection, decode_selection, validate_selection

IDS = ["gentle", "planner", "joker"]


def sel(*ids, reason="fits"):
    return SpeakerSelection(selected_agent_ids=list(ids), reason=reason)


def test_a_valid_selection_has_no_problems():
    assert validate_selection(sel("gentle"), IDS, 2) == []


def test_unknown_ids_are_a_problem():
    assert validate_selection(sel("gentle", "ghost"), IDS, 2) == ["unknown agent id(s): ghost; use only the given ids"]


def test_empty_selection_is_a_problem():
    assert validate_selection(sel(), IDS, 2) == ["selectedAgentIds is empty; choose at least one agent"]


def test_more_than_the_reply_limit_is_a_problem():
    assert validate_selection(sel("gentle", "planner", "joker"), IDS, 2) == ["3 agents selected, at most 2 allowed"]


def test_duplicates_are_removed_not_rejected():
    assert validate_selection(sel("gentle", "gentle", "planner"), IDS, 2) == []
    text = msgspec.json.encode({"selectedAgentIds": ["joker", "joker"], "reason": "fun"}).decode()
    assert decode_selection(text, IDS, 1).selected_agent_ids == ["joker"]


def test_selection_json_is_camel_case():
    assert msgspec.to_builtins(sel("joker")) == {"selectedAgentIds": ["joker"], "reason": "fits"}


@pytest.mark.parametrize(
    "text",
    ["not json", '{"selectedAgentIds": ["gentle"]}', '{"selectedAgentIds": ["gentle"], "reason": "x", "score": 1}',
     '{"selectedAgentIds": ["ghost"], "reason": "x"}', '{"selectedAgentIds": [], "reason": "x"}'],
)
def test_bad_answers_raise_selection_rejected_with_candidates_and_reason(text):
    with pytest.raises(SelectionRejected) as info:
        decode_selection(text, IDS, 2)
    assert info.value.candidates == IDS and info.value.reason and info.value.text == text
