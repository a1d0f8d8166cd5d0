"""The trained offline emotion classifier (``scheduling/emotion/lexicon.json``) and how the
fallback uses it with the seed's keyword rules. Held-out figures per source are the trainer's and
``tests/perf/bench_emotion.py``'s business; these tests keep the behaviour on clear sentences."""

import json
import subprocess
import sys
import textwrap
import time
from importlib import resources
from pathlib import Path

import pytest

from scheduling.emotion import fallback_emotion
from scheduling.emotion.classifier import (
    FAMILY, EmotionClassifier, classify, decode_lexicon, default_classifier, features, language_of, load_classifier,
    prepare,
)
from scheduling.emotion.fallback import heuristic_emotion
from scheduling.emotion.sources import CLASSES, MAPPINGS

DATA = Path("/work/shared/data")


def test_artifact_ships_with_the_package_is_small_and_records_held_out_figures_per_source():
    artifact = resources.files("scheduling.emotion").joinpath("lexicon.json")
    assert len(artifact.read_bytes()) <= 10 * 1024 * 1024
    classifier = load_classifier()
    assert set(classifier.lexicon.models) == {"zh", "en"}
    for model in classifier.lexicon.models.values():
        assert model.labels == list(CLASSES) and len(model.weights) > 10_000
        assert 0 < model.comfort_threshold <= 1.01 and model.keyword_hits >= 2 and 0 < model.floor < 1
    held_out = classifier.lexicon.info["heldout_test"]
    assert set(held_out) == {"smp2020_usual", "smp2020_virus", "clue", "cped", "dair", "goemotions",
                             "chat_zh", "chat_en"}
    for name in ("chat_zh", "chat_en"):  # everyday lines: scored by false alarms, not F1
        figures = held_out.pop(name)
        assert figures["rows"]["test"] >= 50 and 0 <= figures["detector"]["false_alarm"] <= 1
    for figures in held_out.values():
        assert figures["rows"]["test"] > 200
        assert figures["detector"]["macro_f1"] > figures["heuristics"]["macro_f1"]
        assert figures["detector"]["comfort_f1"] > figures["heuristics"]["comfort_f1"]


def test_every_source_label_maps_to_a_class_or_is_dropped():
    for mapping in MAPPINGS.values():
        assert set(mapping.values()) <= {*CLASSES, None}
    assert {FAMILY[label] for label in FAMILY} == set(CLASSES)


def test_default_classifier_is_loaded_once():
    assert default_classifier() is default_classifier()
    assert isinstance(default_classifier(), EmotionClassifier)


def test_scoring_is_deterministic_and_probabilities_sum_to_one():
    texts = ["你凭什么这么对我", "Thanks so much for your help!", "今天吃了面条", "ok", "😭😭"]
    fresh = load_classifier()
    for text in texts:
        assert classify(text) == classify(text) == fresh.classify(text)
        assert fallback_emotion(text) == fallback_emotion(text)
        _, probs = fresh.probabilities(text)
        assert abs(sum(probs.values()) - 1.0) < 1e-9


def test_language_and_features():
    assert language_of("我很sad") == "zh" and language_of("so sad") == "en" and language_of("…!!") is None
    assert language_of("😭😭") == "en"
    assert features("好难过，想哭", "zh") == ["好", "难", "过", "好难", "难过", "好难过", "想", "哭", "想哭"]
    assert features("I’m SOOOO sad!", "en") == ["p:!", "i'm", "soo", "sad", "i'm soo", "soo sad"]
    assert features("难过", "zh", ["kw:sad"])[-1] == "kw:sad"
    assert classify("!!!") == ("neutral", 1.0)


def test_mixed_script_weibo_text_is_read_deliberately():
    plain, tokens = prepare("致敬[心][心]加油//@Mr_凡先生:致敬[心] http://t.cn/abc 😂😂 @小王 你好")
    assert tokens == ["[心]", "[心]", "[心]", "😂", "😂"]
    assert "凡先生" not in plain and "小王" not in plain and "http" not in plain and "心" not in plain
    grams = features("今天好sad啊[泪]👍🏻", "zh")
    assert "sad" in grams and "[泪]" in grams and "👍" in grams and "泪" not in grams
    assert not any(g.isascii() is False and "s" in g for g in grams if not g.startswith("["))  # none across scripts
    # A user name never counts as an emotion cue, and the tag does.
    assert features("//@开心果:转发", "zh") == features("转发", "zh")
    assert fallback_emotion("转发微博[怒][怒]").primary_emotion == "angry"
    assert fallback_emotion("收到礼物了[哈哈][爱你]").primary_emotion in {"happy", "playful"}
    assert fallback_emotion("😭😭😭").needs_comfort


@pytest.mark.parametrize(
    ("text", "family"),
    [
        ("你凭什么这么对我", "angry"),
        ("你能不能闭嘴", "angry"),
        ("这服务态度太差了，简直恶心", "angry"),
        ("太谢谢你了", "happy"),
        ("考试过了，今天真是太棒了", "happy"),
        ("他走了以后我每天都很想哭", "sad"),
        ("外婆去世了，我心里好痛", "sad"),
        ("明天就要手术了，我好怕", "anxious"),
        ("最近总担心会被裁员", "anxious"),
        ("Thanks so much for your help!", "happy"),
        ("I got the job, best day ever", "happy"),
        ("What the hell is wrong with you", "angry"),
        ("I am so annoyed with my roommate right now", "angry"),
        ("I feel so alone and empty since she left", "sad"),
        ("My dog died this morning", "sad"),
        ("I'm terrified of the exam results", "anxious"),
        ("I feel nervous about meeting them", "anxious"),
    ],
)
def test_clear_sentences_get_their_class(text, family):
    assert FAMILY[fallback_emotion(text).primary_emotion] == family


def test_a_weak_keyword_label_can_be_overridden():
    # "why" alone made it "confused"; the classifier hears an angry question.
    assert heuristic_emotion("Why would you even say that to me?").primary_emotion == "confused"
    emotion = fallback_emotion("Why would you even say that to me?")
    assert emotion.primary_emotion == "angry" and emotion.needs_deescalation
    assert emotion.reason.startswith("offline classifier: angry")


@pytest.mark.parametrize(
    "text", ["今天吃了面条", "I had noodles for lunch", "What time is it?", "好的", "你好", "在", "早上好",
             "ok see you tomorrow"],
)
def test_plain_lines_stay_neutral_and_need_nothing(text):
    emotion = fallback_emotion(text)
    assert emotion.primary_emotion == "neutral"
    assert not (emotion.needs_comfort or emotion.needs_deescalation)


@pytest.mark.parametrize(
    ("text", "primary"),
    [("今天好难过，想哭", "sad"), ("I don't know, I'm torn between two offers", "confused"), ("气死我了，又吵架", "angry"),
     ("项目压力太大了，撑不住", "stressed"), ("一个人好孤单，好寂寞", "lonely"), ("好想你，有点心动", "romantic")],
)
def test_explicit_keyword_labels_stand(text, primary):
    assert fallback_emotion(text).primary_emotion == primary == heuristic_emotion(text).primary_emotion


def test_classifier_class_is_refined_by_a_keyword_of_its_family():
    emotion = fallback_emotion("I feel so lonely tonight")
    assert emotion.primary_emotion == "lonely" and emotion.needs_comfort


def test_classifier_labels_get_the_seed_needs():
    angry = fallback_emotion("你凭什么这么对我")
    assert angry.needs_deescalation and angry.needs_comfort and angry.social_energy == "medium"
    happy = fallback_emotion("Thanks so much for your help!")
    assert not (happy.needs_comfort or happy.needs_deescalation) and happy.social_energy == "high"


def test_classifier_intensity_still_rises_with_cues():
    assert fallback_emotion("你凭什么这么对我！！！").intensity > fallback_emotion("你凭什么这么对我").intensity


def test_without_a_classifier_the_keyword_rules_alone_answer():
    emotion = fallback_emotion("你凭什么这么对我", classifier=None)
    assert emotion.primary_emotion == "neutral" and emotion.reason.startswith("offline heuristics")


@pytest.mark.parametrize(
    "text",
    ["要不要换工作", "该不该跟他表白", "考砸了怎么办", "有什么建议吗", "Should I quit?", "what should I do now",
     "any advice?", "Any tips for a first date?", "What would you do?"],
)
def test_advice_phrasing_needs_advice(text):
    assert fallback_emotion(text).needs_advice


def test_runtime_does_not_import_sklearn_or_numpy():
    code = textwrap.dedent(
        """
        import sys
        import scheduling
        from scheduling.emotion import classifier, evaluation, fallback, sources, train_lexicon
        assert scheduling.fallback_emotion("你凭什么这么对我").primary_emotion == "angry"
        leaked = [m for m in sys.modules if m.split(".")[0] in ("sklearn", "scipy", "numpy")]
        assert not leaked, leaked
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(not (DATA / "emotion").is_dir(), reason="training data not available")
def test_training_script_is_deterministic(tmp_path):
    pytest.importorskip("sklearn")
    started = time.monotonic()
    outputs = []
    for run in ("a", "b"):  # one after the other: two cores are shared
        out = tmp_path / run / "lexicon.json"
        result = subprocess.run(
            [sys.executable, "-m", "scheduling.emotion.train_lexicon", "--data", str(DATA), "--out", str(out),
             "--limit", "800"],
            capture_output=True, text=True, timeout=120,
        )
        assert result.returncode == 0, result.stderr
        assert '"heldout_test"' in result.stdout and '"smp2020_usual"' in result.stdout
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert time.monotonic() - started < 90
    trained = load_classifier(tmp_path / "a" / "lexicon.json")
    assert set(trained.lexicon.models) == {"zh", "en"}
    assert json.loads(outputs[0])["info"]["limit"] == 800


@pytest.mark.parametrize("text", ["我是挺生气的，不过不用安慰我", "I'm sad about it but don't worry about me"])
def test_comfort_is_not_needed_when_the_text_declines_it(text):
    emotion = fallback_emotion(text)
    assert emotion.primary_emotion in {"angry", "sad"} and not emotion.needs_comfort
    assert fallback_emotion("I'm so sad, I need a hug").needs_comfort


def test_the_floor_is_named_in_the_reason():
    emotion = fallback_emotion("今天吃了面条")
    assert emotion.primary_emotion == "neutral"
    assert "offline classifier" in emotion.reason


def test_the_trainer_tunes_through_the_runtime_decision():
    """``train_lexicon.runtime_classes`` (the classes the bias is tuned on) is what
    ``fallback_emotion`` answers, floor and keyword refinements included."""
    np = pytest.importorskip("numpy")
    import msgspec

    from scheduling.emotion import train_lexicon
    from scheduling.emotion.sources import Source

    classifier = default_classifier()
    assert classifier is not None
    texts = ["今天吃了面条", "气死我了，又吵架", "最近总担心会被裁员", "早上好", "一个人好孤单，好寂寞",
             "我该怎么办，帮我分析一下", "哈哈哈笑死我了[哈哈]", "今天好难过，想哭"]
    model = msgspec.to_builtins(classifier.model("zh"))
    source = Source("t", "zh", [], ("angry", "anxious", "happy", "neutral", "sad"),
                    validation=[("g", t, "neutral") for t in texts])
    block = train_lexicon._validation_blocks(model, [source], "zh")[0]
    got = train_lexicon.runtime_classes(classifier.model("zh"), block, np.zeros(5), "zh")
    assert got == [FAMILY[fallback_emotion(t, classifier=classifier).primary_emotion] for t in texts]


def _leaning_classifier(**thresholds: float) -> EmotionClassifier:
    """A one-feature zh model: "嗯" alone is neutral; "哼" pulls angry up, "嘿" happy, so that
    neutral still wins and only the thresholds decide the leaning."""
    weights = {"哼": [1500, 0, 0, 0, 0], "嘿": [0, 0, 1500, 0, 0]}
    model = {"labels": list(CLASSES), "intercepts": [0, 0, 0, 2500, 0], "scale": 1000.0, "comfort_threshold": 1.01,
             "keyword_hits": 99, "floor": 0.3, "weights": weights, **thresholds}
    return EmotionClassifier(decode_lexicon(json.dumps({"format": 2, "models": {"zh": model}})))


def test_a_neutral_text_that_leans_angry_or_happy_is_routed_by_its_lean():
    plain = _leaning_classifier()
    leaning = _leaning_classifier(heated_threshold=0.2, upbeat_threshold=0.2)
    angry_lean, happy_lean = "哼，随你们吧这次", "嘿，周末出去走走"
    for text in (angry_lean, happy_lean):
        assert plain.predict(text).label == leaning.predict(text).label == "neutral"
    heated = fallback_emotion(angry_lean, classifier=leaning)
    assert heated.primary_emotion == "neutral" and heated.needs_deescalation and "heated p(angry)=" in heated.reason
    assert not fallback_emotion(angry_lean, classifier=plain).needs_deescalation
    upbeat = fallback_emotion(happy_lean, classifier=leaning)
    assert upbeat.primary_emotion == "neutral" and upbeat.social_energy == "high" and not upbeat.needs_deescalation
    assert fallback_emotion(happy_lean, classifier=plain).social_energy == "medium"
    # Too short to lean, as for "upset".
    assert not fallback_emotion("哼", classifier=leaning).needs_deescalation


def test_an_artifact_without_leaning_thresholds_never_leans():
    model = _leaning_classifier().model("zh")
    assert model.heated_threshold == model.upbeat_threshold == 1.01


def _near_tie_classifier(**fields: float) -> EmotionClassifier:
    """A zh model where "裁" pulls angry just above the anxious that the keyword 担心 brings."""
    weights = {"kw:anxious": [0, 1000, 0, 0, 0], "裁": [1100, 0, 0, 0, 0]}
    model = {"labels": list(CLASSES), "intercepts": [0, 0, 0, 0, 0], "scale": 1000.0, "comfort_threshold": 1.01,
             "keyword_hits": 99, "floor": 0.3, "weights": weights, **fields}
    return EmotionClassifier(decode_lexicon(json.dumps({"format": 2, "models": {"zh": model}})))


def test_a_near_tie_goes_to_the_feeling_the_text_names():
    text = "总担心被裁"
    assert _near_tie_classifier().predict(text, ["kw:anxious"]).label == "angry"
    assert fallback_emotion(text, classifier=_near_tie_classifier()).primary_emotion == "angry"
    named = fallback_emotion(text, classifier=_near_tie_classifier(keyword_margin=0.05))
    assert named.primary_emotion == "anxious" and not named.needs_deescalation
    assert "refined to anxious by keywords" in named.reason
    # Beyond the margin the classifier's class stands.
    assert fallback_emotion(text, classifier=_near_tie_classifier(keyword_margin=0.01)).primary_emotion == "angry"
