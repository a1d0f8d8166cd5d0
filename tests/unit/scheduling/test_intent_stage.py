import msgspec
import pytest

from scheduling import IntentInvalid, build_intent_request, decode_intent, fallback_intent, validate_intent

from scheduling_fixtures import TEAM, intent

IDS = [a.id for a in TEAM]


def test_mentioned_agents_make_an_address_specific_intent():
    result = fallback_intent("豆豆你怎么看", TEAM)
    assert (result.kind, result.addressed_agent_ids, result.wants_multiple_voices) == ("address_specific", ["joker"], False)


def test_several_mentions_want_several_voices():
    result = fallback_intent("阿哲和小暖你们说说", TEAM)
    assert result.addressed_agent_ids == ["planner", "gentle"] and result.wants_multiple_voices


@pytest.mark.parametrize("text", ["你们觉得呢", "大家好", "各位怎么看", "What do you all think?", "hey everyone", "you guys ok?"])
def test_everyone_words_address_all(text):
    result = fallback_intent(text, TEAM)
    assert result.kind == "address_all" and result.wants_multiple_voices and result.addressed_agent_ids == []


@pytest.mark.parametrize("text", ["我该不该辞职", "这个怎么办", "Should I take the job?", "Any advice on moving?"])
def test_advice_cues_make_an_advice_request(text):
    assert fallback_intent(text, TEAM).kind == "advice_request"


@pytest.mark.parametrize("text", ["明天会下雨吗", "Is it raining?", "为什么天是蓝的"])
def test_questions_are_questions(text):
    assert fallback_intent(text, TEAM).kind == "question"


@pytest.mark.parametrize("text", ["今天好难过", "I feel so lonely today"])
def test_feelings_are_emotional_shares(text):
    assert fallback_intent(text, TEAM).kind == "emotional_share"


def test_greetings_are_chit_chat():
    assert fallback_intent("早上好", TEAM).kind == "chit_chat"


def test_asking_for_different_views_wants_several_voices():
    assert fallback_intent("我想听听不同的看法", TEAM).wants_multiple_voices


def test_intent_validation_rejects_ids_that_are_not_members():
    assert validate_intent(intent("address_specific", ["ghost"]), IDS) == [
        "addressedAgentIds contains unknown agent id 'ghost'"
    ]
    assert validate_intent(intent("address_specific", ["joker"]), IDS) == []


def test_decode_intent_raises_with_problems_for_repair():
    bad = msgspec.json.encode({"kind": "address_specific", "addressedAgentIds": ["ghost"], "wantsMultipleVoices": False})
    with pytest.raises(IntentInvalid) as info:
        decode_intent(bad.decode(), IDS)
    assert "ghost" in info.value.problems[0]


def test_decode_intent_accepts_a_valid_answer_and_drops_repeats():
    good = {"kind": "address_specific", "addressedAgentIds": ["joker", "joker"], "wantsMultipleVoices": False,
            "reason": "named"}
    assert decode_intent(msgspec.json.encode(good).decode(), IDS).addressed_agent_ids == ["joker"]


def test_intent_prompt_lists_member_ids_and_only_classifies():
    messages = build_intent_request("豆豆你好", TEAM, "", "zh")
    assert "id=joker name=豆豆" in messages[1].content
    assert "不要生成回复" in messages[0].content
