import msgspec

from scheduling import SpeakerSelection, decide_speakers, fallback_emotion, llm_selection_needed, plan_reply_count

from scheduling_fixtures import TEAM, context, emotion, intent

SAD = emotion(primary_emotion="sad", intensity=0.5, needs_comfort=True, social_energy="low")
DESPAIR = emotion(primary_emotion="sad", intensity=0.9, needs_comfort=True, social_energy="low")


def decide(user_emotion=SAD, user_intent=None, mentions=(), llm=None, reply_limit=3, chattiness="balanced"):
    return decide_speakers(agents=TEAM, context=context(user_emotion=user_emotion), intent=user_intent or intent(),
                           mentions=list(mentions), llm_selection=llm, reply_limit=reply_limit, chattiness=chattiness)


def count(user_emotion=SAD, user_intent=None, mentions=0, chattiness="balanced", reply_limit=3):
    return plan_reply_count(user_intent or intent(), user_emotion, mention_count=mentions, reply_limit=reply_limit,
                            candidate_count=4, chattiness=chattiness)


def test_one_agent_replies_normally():
    assert count() == 1


def test_everyone_questions_several_views_and_several_names_allow_up_to_the_limit():
    assert count(user_intent=intent("address_all", many=True)) == 3
    assert count(user_intent=intent("advice_request", many=True)) == 3
    assert count(mentions=2) == 3


def test_high_intensity_comfort_needs_a_relay():
    assert count(user_emotion=DESPAIR) == 3
    assert count(user_emotion=msgspec.structs.replace(DESPAIR, intensity=0.79)) == 1
    assert count(user_emotion=msgspec.structs.replace(DESPAIR, intensity=0.8)) == 3
    assert count(user_emotion=msgspec.structs.replace(DESPAIR, needs_comfort=False)) == 1


def test_quiet_group_keeps_one_voice_unless_addressed_to_several():
    assert count(user_emotion=DESPAIR, chattiness="quiet") == 1
    assert count(user_intent=intent("address_all", many=True), chattiness="quiet") == 3


def test_lively_group_allows_one_more_within_the_limit():
    assert count(chattiness="lively") == 2
    assert count(user_emotion=DESPAIR, chattiness="lively") == 3
    assert count(chattiness="lively", reply_limit=1) == 1


def test_every_candidate_is_scored_whoever_decides():
    for decision in (decide(), decide(mentions=["joker"]), decide(llm=SpeakerSelection(["planner"], "x"))):
        assert [c.rank for c in decision.candidates] == [1, 2, 3, 4]
        assert {c.agent_id for c in decision.candidates} == {a.id for a in TEAM}
        assert decision.weights_version == "seed-v0"


def test_fallback_picks_the_top_scored_agent_and_says_so():
    decision = decide()
    assert decision.selected_agent_ids == ["gentle"] and decision.selected_by == {"gentle": "fallback"}
    assert "fallback scorer seed-v0" in decision.reason
    assert [c.selected for c in decision.candidates] == [True, False, False, False]


def test_mentioned_agent_is_selected_even_if_stale_and_a_poor_match():
    decision = decide(mentions=["joker"])
    assert decision.selected_agent_ids == ["joker"] and decision.selected_by == {"joker": "mention"}


def test_mentions_come_first_in_mention_order_up_to_the_limit():
    decision = decide(mentions=["calm", "joker", "planner", "gentle"], reply_limit=2)
    assert decision.selected_agent_ids == ["calm", "joker"]


def test_mention_beats_the_llm_and_the_llm_only_fills_free_slots():
    llm = SpeakerSelection(["planner", "gentle"], "advice and comfort")
    assert decide(mentions=["joker"], llm=llm).selected_agent_ids == ["joker"]
    relay = decide(user_emotion=DESPAIR, mentions=["joker"], llm=llm)
    assert relay.selected_by == {"joker": "mention", "planner": "llm", "gentle": "llm"}


def test_valid_llm_selection_is_used_in_its_order():
    decision = decide(llm=SpeakerSelection(["calm", "planner"], "calm first"))
    assert decision.selected_agent_ids == ["calm", "planner"]
    assert decision.selected_by == {"calm": "llm", "planner": "llm"} and "calm first" in decision.reason


def test_invalid_llm_selection_falls_back_and_records_why():
    decision = decide(llm=SpeakerSelection(["ghost"], "?"))
    assert decision.selected_by == {"gentle": "fallback"}
    assert decision.llm_problems == ["unknown agent id(s): ghost; use only the given ids"]
    assert "llm selection rejected" in decision.reason


def test_quiet_group_trims_an_llm_choice_of_several_to_one():
    decision = decide(llm=SpeakerSelection(["calm", "planner"], "x"), chattiness="quiet")
    assert decision.selected_agent_ids == ["calm"]


def test_everyone_question_in_the_fallback_gets_several_replies_in_score_order():
    decision = decide(user_intent=intent("address_all", many=True), reply_limit=2)
    assert decision.selected_agent_ids == [c.agent_id for c in decision.candidates[:2]]


def test_unknown_mentions_are_ignored():
    assert decide(mentions=["ghost"]).selected_by == {"gentle": "fallback"}


def test_llm_call_can_be_skipped_when_mentions_fill_the_turn():
    assert not llm_selection_needed(intent("address_specific", ["joker"]), SAD, ["joker"], reply_limit=2, candidate_count=4)
    assert llm_selection_needed(intent(), SAD, [], reply_limit=2, candidate_count=4)


def test_decision_serialises_to_camel_case_metadata():
    data = msgspec.to_builtins(decide(user_emotion=fallback_emotion("好难过")))
    assert {"candidates", "selectedAgentIds", "selectedBy", "reason", "weightsVersion", "replyTarget"} <= set(data)
    assert {"agentId", "features", "score", "rank", "selected", "selectedBy", "llmSelected"} == set(data["candidates"][0])


def test_decision_records_the_deciding_rule_and_the_llm_opinion_per_candidate():
    llm = SpeakerSelection(["planner"], "advice")
    by_llm = decide(llm=llm)
    assert by_llm.decided_by == "llm" and by_llm.llm_selected_agent_ids == ["planner"]
    assert {c.agent_id: c.llm_selected for c in by_llm.candidates} == {
        "gentle": False, "planner": True, "joker": False, "calm": False}
    by_mention = decide(mentions=["joker"], llm=llm)
    assert by_mention.decided_by == "mention" and by_mention.selected_agent_ids == ["joker"]
    assert all(c.llm_selected is None for c in decide().candidates) and decide().decided_by == "fallback"
