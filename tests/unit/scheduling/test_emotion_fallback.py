import pytest

from scheduling.emotion import fallback_emotion


@pytest.mark.parametrize(
    ("text", "primary"),
    [
        ("今天好难过，想哭", "sad"),
        ("一个人好孤单，好寂寞", "lonely"),
        ("明天面试好紧张，睡不着", "anxious"),
        ("项目压力太大了，撑不住", "stressed"),
        ("气死我了，又吵架", "angry"),
        ("纠结要不要换工作，好迷茫", "confused"),
        ("好想你，有点心动", "romantic"),
        ("哈哈哈笑死我了", "playful"),
        ("今天拿到offer，好开心", "happy"),
        ("今天吃了面条", "neutral"),
        ("I'm so sad, I feel like crying", "sad"),
        ("I feel so lonely tonight", "lonely"),
        ("I'm really nervous and worried about tomorrow", "anxious"),
        ("I'm completely overwhelmed and burned out", "stressed"),
        ("I am furious, we had a huge fight", "angry"),
        ("I don't know, I'm torn between two offers", "confused"),
        ("I miss you, I think I have a crush", "romantic"),
        ("lol that's hilarious", "playful"),
        ("Great news, I'm so happy!", "happy"),
        ("I had noodles for lunch", "neutral"),
    ],
)
def test_primary_emotion_is_detected_in_chinese_and_english(text, primary):
    assert fallback_emotion(text).primary_emotion == primary


@pytest.mark.parametrize("text", ["我好难过", "好焦虑", "气死了", "陪陪我", "I'm so sad", "I'm anxious", "I'm so angry", "I need a hug"])
def test_sadness_anxiety_anger_and_asking_for_company_need_comfort(text):
    assert fallback_emotion(text).needs_comfort


@pytest.mark.parametrize("text", ["怎么办", "给我点建议", "帮我想想怎么做", "What should I do?", "any advice?", "help me decide"])
def test_confusion_and_asking_for_advice_need_advice(text):
    assert fallback_emotion(text).needs_advice


@pytest.mark.parametrize("text", ["气死我了", "大家冷静一下", "I'm so pissed off", "everyone calm down"])
def test_anger_and_calls_for_calm_need_deescalation(text):
    assert fallback_emotion(text).needs_deescalation


def test_neutral_text_needs_nothing():
    e = fallback_emotion("今天吃了面条")
    assert not (e.needs_comfort or e.needs_advice or e.needs_deescalation)
    assert e.intensity <= 0.4


@pytest.mark.parametrize(
    ("calm", "intense"),
    [
        ("我难过", "我真的好难过！！！"),
        ("我很难过", "我太难过了，呜呜呜呜"),
        ("I'm sad", "I'm really, really sad!!!"),
        ("I'm angry", "I am SO ANGRY right now!!!"),
        ("haha", "hahahaha so funny!!"),
    ],
)
def test_intensity_rises_with_exclamations_repetition_and_intensifiers(calm, intense):
    assert fallback_emotion(intense).intensity > fallback_emotion(calm).intensity


def test_strong_sadness_reaches_the_relay_threshold():
    e = fallback_emotion("我真的好难过！！！")
    assert e.intensity >= 0.8 and e.needs_comfort


def test_intensity_is_always_within_range():
    assert fallback_emotion("!!!!!!!!!! 真的真的真的太太太非常非常 气死 难过 焦虑 SO ANGRY").intensity <= 1.0


@pytest.mark.parametrize(
    ("text", "energy"),
    [("好难过", "low"), ("唉……", "low"), ("I feel lonely", "low"), ("哈哈哈太好玩了", "high"),
     ("Yay, great news!", "high"), ("今天吃了面条", "medium"), ("气死我了", "medium")],
)
def test_social_energy_is_low_when_drained_and_high_when_playful(text, energy):
    assert fallback_emotion(text).social_energy == energy


def test_reason_names_the_cues_and_fits_the_limit():
    e = fallback_emotion("我真的好难过！！" * 100)
    assert "难过" in e.reason and len(e.reason) <= 400


def test_greeting_is_not_mistaken_for_an_intensifier():
    assert fallback_emotion("你好").intensity == fallback_emotion("在").intensity
