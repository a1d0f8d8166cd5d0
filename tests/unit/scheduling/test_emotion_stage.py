import msgspec

from app.llm.schema import unbounded, wire_schema
from scheduling import EMOTION_CONSTRAINTS
import pytest

from scheduling import EmotionInvalid, UserEmotion, build_emotion_request, decode_emotion, emotion_model_request

GOOD = {"primaryEmotion": "sad", "intensity": 0.7, "needsComfort": True, "needsAdvice": False,
        "needsDeescalation": False, "socialEnergy": "low", "reason": "says they are sad"}


def test_emotion_json_uses_the_seed_camel_case_names():
    emotion, problems = decode_emotion(msgspec.json.encode(GOOD).decode())
    assert problems == [] and emotion.primary_emotion == "sad"
    assert msgspec.to_builtins(emotion) == GOOD


def test_out_of_range_intensity_is_clamped_and_reported():
    emotion, problems = decode_emotion(msgspec.json.encode({**GOOD, "intensity": 1.7}).decode())
    assert emotion.intensity == 1.0
    assert problems == ["intensity 1.7 outside 0..1"]


def test_overlong_reason_is_cut_to_400_chars_and_reported():
    emotion, problems = decode_emotion(msgspec.json.encode({**GOOD, "reason": "x" * 500}).decode())
    assert len(emotion.reason) == 400 and "max 400" in problems[0]


@pytest.mark.parametrize(
    "payload",
    [{**GOOD, "primaryEmotion": "furious"}, {**GOOD, "extra": 1}, {k: v for k, v in GOOD.items() if k != "reason"},
     {**GOOD, "socialEnergy": "huge"}],
)
def test_wrong_shapes_are_rejected_for_repair(payload):
    with pytest.raises(EmotionInvalid):
        decode_emotion(msgspec.json.encode(payload).decode())


def test_not_json_is_rejected_for_repair():
    with pytest.raises(EmotionInvalid):
        decode_emotion("I think the user is sad")


def test_emotion_prompt_judges_only_and_carries_the_message_and_transcript():
    messages = build_emotion_request("我好难过", "User: 在吗\n小暖: 在的", "zh-CN")
    assert [m.role for m in messages] == ["system", "user"]
    assert "不要生成聊天回复" in messages[0].content and "安慰、建议、降温" in messages[0].content
    assert "我好难过" in messages[1].content and "小暖: 在的" in messages[1].content
    english = build_emotion_request("I'm sad", "", "en")
    assert "Do not write a chat reply" in english[0].content


def test_emotion_request_has_a_strict_schema_from_the_struct():
    request = emotion_model_request("hi", "", "en")
    schema = wire_schema(UserEmotion, EMOTION_CONSTRAINTS)
    assert request.purpose == "emotion" and request.response_schema is None
    assert schema["properties"]["reason"]["maxLength"] == 160 and unbounded(schema) == []
    assert set(schema["required"]) == set(schema["properties"]) == {f for f in GOOD}
    assert schema["additionalProperties"] is False and "$ref" not in schema
    assert isinstance(msgspec.json.decode(msgspec.json.encode(GOOD), type=UserEmotion), UserEmotion)
