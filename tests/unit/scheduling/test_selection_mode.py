"""``selection.mode`` planning: when ``hybrid`` asks the model, which slots it may decide, and
between whom (``scheduling.selection.mode``); and ``decide_speakers`` keeping the settled picks."""

from scheduling import SpeakerSelection, decide_speakers
from scheduling.selection.decide import SelectionDecision
from scheduling.selection.mode import contenders, plan_selection, settled
from scheduling.selection.scorer import CandidateScore

from scheduling_fixtures import TEAM, context, emotion, intent


def scorer(*scores: float, picked: int) -> SelectionDecision:
    """Candidates a, b, c, … with ``scores`` (best first); the first ``picked`` chosen by the scorer."""
    ids = "abcdef"[: len(scores)]
    candidates = [CandidateScore(agent_id=i, features={}, score=s, rank=n + 1, selected=n < picked,
                                 selected_by="fallback" if n < picked else None)
                  for n, (i, s) in enumerate(zip(ids, scores))]  # fmt: skip
    return SelectionDecision(candidates=candidates, selected_agent_ids=list(ids[:picked]),
                             selected_by={i: "fallback" for i in ids[:picked]}, reason="", weights_version="t",
                             reply_target=picked)  # fmt: skip


def test_a_clear_first_pick_is_settled_when_only_the_second_slot_is_close():
    decision = scorer(3.0, 1.2, 1.1, 0.1, picked=2)  # a far ahead; b and c nearly tied
    plan = plan_selection("hybrid", decision, llm_needed=True, hybrid_margin=0.5)
    assert plan.ask_model and plan.scorer_margin == 0.1
    assert (plan.settled, plan.contenders) == (["a"], ["b", "c"])  # d is out of reach


def test_a_close_single_slot_settles_nobody():
    decision = scorer(2.0, 1.9, 0.2, picked=1)
    assert settled(decision, 0.5) == [] and contenders(decision, 0.5) == ["a", "b"]


def test_every_pick_close_to_the_best_left_out_is_in_question():
    decision = scorer(1.4, 1.2, 1.1, picked=2)  # a is only 0.3 above c
    assert settled(decision, 0.5) == [] and contenders(decision, 0.5) == ["a", "b", "c"]


def test_only_hybrid_close_calls_carry_settled_picks():
    decision = scorer(3.0, 1.2, 1.1, picked=2)
    assert plan_selection("llm", decision, llm_needed=True, hybrid_margin=0.5).settled == []
    clear = plan_selection("hybrid", decision, llm_needed=True, hybrid_margin=0.05)
    assert not clear.ask_model and clear.settled == [] and clear.contenders == []


SAD = emotion(primary_emotion="sad", intensity=0.5, needs_comfort=True, social_energy="low")


def decide(llm, settled_ids, mentions=(), reply_limit=2):
    return decide_speakers(agents=TEAM, context=context(user_emotion=SAD), intent=intent(), mentions=list(mentions),
                           llm_selection=llm, reply_limit=reply_limit, chattiness="lively", settled=settled_ids)  # fmt: skip


def test_settled_picks_speak_first_and_the_model_fills_the_rest():
    decision = decide(SpeakerSelection(["joker"], "lighten it"), ["gentle"])
    assert decision.selected_agent_ids == ["gentle", "joker"]
    assert decision.selected_by == {"gentle": "fallback", "joker": "llm"} and decision.decided_by == "llm"
    assert "clear scorer pick" in decision.reason


def test_the_model_cannot_push_out_a_settled_pick_or_add_more_than_the_slots_left():
    decision = decide(SpeakerSelection(["joker", "planner"], "both"), ["gentle"])
    assert decision.selected_agent_ids == ["gentle", "joker"]


def test_an_invalid_model_choice_leaves_the_scorer_order_with_the_settled_first():
    decision = decide(SpeakerSelection(["nobody"], "?"), ["gentle"])
    assert decision.selected_agent_ids[0] == "gentle" and decision.decided_by == "fallback"
    assert set(decision.selected_by.values()) == {"fallback"}


def test_mentions_come_before_settled_picks():
    decision = decide(SpeakerSelection(["joker"], "x"), ["gentle"], mentions=["planner"], reply_limit=3)
    assert decision.selected_agent_ids[:2] == ["planner", "gentle"]
    assert decision.selected_by["planner"] == "mention" and decision.selected_by["gentle"] == "fallback"
