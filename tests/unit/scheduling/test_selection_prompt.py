from app.llm.schema import unbounded, wire_schema
from scheduling import SpeakerSelection, build_selection_request, selection_constraints, selection_model_request

from scheduling_fixtures import TEAM, agent_turns, context, emotion, intent


def request(language="zh-CN", chattiness="balanced", reply_limit=2):
    ctx = context(TEAM, {"gentle": 85}, agent_turns("joker"), emotion(primary_emotion="sad", needs_comfort=True))
    return build_selection_request(text="我好难过", agents=TEAM, context=ctx, intent=intent("emotional_share"),
                                   reply_limit=reply_limit, language=language, chattiness=chattiness)


def test_chinese_prompt_carries_the_seed_selection_principles():
    system = request()[0].content
    for principle in ["最多选择 2 个 Agent", "不要为了热闹而选择过多 Agent", "温柔、善于共情且关系更熟",
                      "理性、清晰、擅长复盘", "边界感强、克制、能降温", "更活泼、有趣", "最近发言太频繁的 Agent 要适当降权",
                      "必须使用给定 Agent 的 id"]:
        assert principle in system


def test_english_prompt_carries_the_same_principles():
    system = request("en")[0].content
    for principle in ["at most 2 agent", "gentle, empathetic", "rational, clear", "firm boundaries",
                      "lively, fun", "Down-weight agents that spoke a lot recently", "several perspectives"]:
        assert principle in system


def test_user_message_has_agents_intent_emotion_and_speaking_context():
    user = request()[1].content
    assert "id=gentle name=小暖" in user and "kind=emotional_share" in user
    assert "primaryEmotion=sad" in user and "needsComfort=True" in user
    assert "relationshipStage=close_bond" in user and "directMessages=85" in user
    assert "recentReplies=1 lastSpoke=0 turn(s) ago" in user
    assert "我好难过" in user


def test_chattiness_preference_is_stated():
    assert "安静" in request(chattiness="quiet")[0].content
    assert "lively" in request("en", chattiness="lively")[0].content


def test_selection_request_has_the_strict_selection_schema():
    ctx = context()
    req = selection_model_request(text="hi", agents=TEAM, context=ctx, intent=intent(), reply_limit=2, language="en")
    assert req.purpose == "select"
    schema = wire_schema(SpeakerSelection, selection_constraints([a.id for a in TEAM], 2))
    assert schema["required"] == ["selectedAgentIds", "reason"]
    assert schema["additionalProperties"] is False
    ids = schema["properties"]["selectedAgentIds"]
    assert ids["items"]["enum"] == [a.id for a in TEAM] and ids["maxItems"] == 2 and ids["minItems"] == 1
    assert unbounded(schema) == []
