"""The emotion trainer's recipe (``scheduling/emotion/train_lexicon.py``): the blended model folds
into the one weight table the runtime reads, and the plain chat lines its bias tuning guards stay
neutral in the shipped artifact. Figures are the benchmark's business."""

import pytest

from scheduling.emotion import fallback_emotion, train_lexicon
from scheduling.emotion.sources import CLASSES, Source


@pytest.mark.parametrize("text", [t for lines in train_lexicon.PLAIN_LINES.values() for t in lines])
def test_guarded_plain_lines_stay_neutral_and_need_nothing(text):
    emotion = fallback_emotion(text)
    assert emotion.primary_emotion == "neutral" and emotion.social_energy != "high"
    assert not (emotion.needs_comfort or emotion.needs_deescalation)


def _toy_source() -> Source:
    rows = {
        "angry": ["气死我了", "你凭什么骂我", "滚开别烦我", "真让人生气"],
        "anxious": ["好担心明天", "我害怕考试", "紧张得睡不着", "心里很不安"],
        "happy": ["今天好开心", "太棒了谢谢你", "考试过了真高兴", "好快乐呀"],
        "neutral": ["今天吃了面条", "我在地铁上", "明天见", "现在几点了"],
        "sad": ["好难过想哭", "心碎了", "外婆去世了好伤心", "我很失落"],
    }
    train = [(f"{label}{i}", text, label) for label, texts in rows.items() for i, text in enumerate(texts * 3)]
    return Source("toy", "zh", [], CLASSES, train=train)


def test_nbsvm_blend_folds_into_one_weight_per_feature_and_class(monkeypatch):
    """The exported table gives the same logits (to rounding) as the blend of the fitted models:
    the runtime sums one row per feature, whatever the recipe."""
    np = pytest.importorskip("numpy")
    pytest.importorskip("sklearn")
    monkeypatch.setattr(train_lexicon, "PRUNE", 0)
    monkeypatch.setattr(train_lexicon, "SCALE", 10_000)
    source = _toy_source()
    model = train_lexicon.train_model([source], "zh")
    assert model["labels"] == list(CLASSES)
    texts = ["气死我了", "好担心明天", "今天好开心", "我在地铁上", "好难过想哭"]
    logits = np.array(train_lexicon._logits(model, texts, "zh")) / model["scale"]
    assert [CLASSES[k] for k in logits.argmax(axis=1)] == ["angry", "anxious", "happy", "neutral", "sad"]
    # Deterministic: the same data gives the same table.
    again = train_lexicon.train_model([source], "zh")
    assert again == model


def test_bias_tuning_refuses_a_bias_that_makes_a_plain_line_emotional(monkeypatch):
    np = pytest.importorskip("numpy")
    pytest.importorskip("sklearn")
    source = _toy_source()
    source.validation = list(source.train)
    model = train_lexicon.train_model([source], "zh")
    monkeypatch.setattr(train_lexicon, "BIAS_CLASSES", tuple(CLASSES))
    biases = train_lexicon.tune_biases(model, [source], "zh")
    lm = train_lexicon.decode_lexicon(
        __import__("json").dumps({"format": train_lexicon.ARTIFACT_FORMAT, "models": {"zh": model}})).models["zh"]
    plain = train_lexicon._validation_blocks(model, [Source("plain", "zh", [], CLASSES, validation=[
        ("p", t, "neutral") for t in train_lexicon.PLAIN_LINES["zh"]])], "zh")[0]
    assert set(train_lexicon.runtime_classes(lm, plain, np.array(biases), "zh")) == {"neutral"}
    assert biases[CLASSES.index("neutral")] >= 0


def test_leaning_thresholds_are_tuned_for_routing_and_leave_plain_lines_alone():
    pytest.importorskip("sklearn")
    source = _toy_source()
    source.validation = list(source.train)
    model = train_lexicon.train_model([source], "zh")
    draft = train_lexicon.EmotionClassifier(train_lexicon.decode_lexicon(
        __import__("json").dumps({"format": train_lexicon.ARTIFACT_FORMAT, "models": {"zh": model}})))
    heated, upbeat = train_lexicon.tune_leanings(draft, "zh", [source])
    assert heated in train_lexicon.LEAN_THRESHOLDS and upbeat in train_lexicon.LEAN_THRESHOLDS
    plain = train_lexicon._leaning_inputs(draft, "zh", list(train_lexicon.PLAIN_LINES["zh"]))
    assert not any(h or u for h, u in zip(*train_lexicon._leans(plain, heated, upbeat)))
    assert train_lexicon.guard_leanings(model | {"heated_threshold": heated, "upbeat_threshold": upbeat}, "zh") == (heated, upbeat)
