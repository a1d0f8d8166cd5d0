"""The trained offline emotion classifier (``scheduling/emotion/lexicon.json``) and how the
fallback uses it on top of the seed's keyword rules."""

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
    EmotionClassifier, classify, default_classifier, features, language_of, load_classifier,
)
from scheduling.emotion.fallback import heuristic_emotion

DATA = Path("/work/shared/data")


def test_artifact_ships_with_the_package_loads_and_is_small():
    artifact = resources.files("scheduling.emotion").joinpath("lexicon.json")
    assert len(artifact.read_bytes()) < 400_000
    classifier = load_classifier()
    assert set(classifier.lexicon.models) == {"zh", "en"}
    for model in classifier.lexicon.models.values():
        assert "neutral" in model.labels and len(model.weights) > 500
        assert 0 < model.threshold <= 1.01 and 0 < model.override_threshold <= 1.01
    held_out = classifier.lexicon.info["heldout_test"]
    for lang in ("zh", "en"):
        assert held_out[lang]["heuristics_plus_classifier"]["macro_f1"] > held_out[lang]["heuristics"]["macro_f1"]


def test_default_classifier_is_loaded_once():
    assert default_classifier() is default_classifier()
    assert isinstance(default_classifier(), EmotionClassifier)


def test_scoring_is_deterministic_and_probabilities_sum_to_one():
    texts = ["你凭什么这么对我", "Thanks so much for your help!", "今天吃了面条", "ok"]
    fresh = load_classifier()
    for text in texts:
        assert classify(text) == classify(text) == fresh.classify(text)
        assert fallback_emotion(text) == fallback_emotion(text)
        _, probs = fresh.probabilities(text)
        assert abs(sum(probs.values()) - 1.0) < 1e-9


def test_language_and_features():
    assert language_of("我很sad") == "zh" and language_of("so sad") == "en" and language_of("…!!") is None
    assert features("好难过，想哭", "zh") == ["好", "难", "过", "好难", "难过", "想", "哭", "想哭"]
    assert features("I’m SO sad", "en") == ["i'm", "so", "sad", "i'm so", "so sad"]
    assert classify("!!!") == ("neutral", 1.0)


@pytest.mark.parametrize(
    ("text", "primary"),
    [
        ("你凭什么这么对我", "angry"),
        ("你能不能闭嘴", "angry"),
        ("太谢谢你了", "happy"),
        ("好美啊", "happy"),
        ("Thanks so much for your help!", "happy"),
        ("Wow, this is beautiful", "happy"),
        ("What the hell is wrong with you", "angry"),
        ("This is the worst day ever", "angry"),
    ],
)
def test_lines_without_keywords_are_now_classified(text, primary):
    assert heuristic_emotion(text).primary_emotion == "neutral"
    emotion = fallback_emotion(text)
    assert emotion.primary_emotion == primary
    assert emotion.reason.startswith("offline classifier")
    assert 0.2 < emotion.intensity <= 1.0


def test_a_weak_keyword_label_can_be_overridden():
    # "why" alone made it "confused"; the classifier hears an angry question.
    assert heuristic_emotion("Why would you even say that to me?").primary_emotion == "confused"
    emotion = fallback_emotion("Why would you even say that to me?")
    assert emotion.primary_emotion == "angry" and emotion.needs_deescalation
    assert "over weak keyword label confused" in emotion.reason


@pytest.mark.parametrize("text", ["今天吃了面条", "I had noodles for lunch", "What time is it?", "好的", "你好", "在"])
def test_plain_lines_stay_neutral(text):
    assert fallback_emotion(text).primary_emotion == "neutral"


@pytest.mark.parametrize("text", ["今天好难过，想哭", "I don't know, I'm torn between two offers", "气死我了，又吵架"])
def test_keyword_labels_with_several_cues_are_never_overridden(text):
    assert fallback_emotion(text) == heuristic_emotion(text)


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


def test_runtime_does_not_import_sklearn():
    code = textwrap.dedent(
        """
        import sys
        import scheduling
        from scheduling.emotion import classifier, fallback, train_lexicon
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
    runs = {}
    for run in ("a", "b"):  # both at once: the test stays well under 10 s
        out = tmp_path / run / "lexicon.json"
        runs[out] = subprocess.Popen(
            [sys.executable, "-m", "scheduling.emotion.train_lexicon", "--data", str(DATA), "--out", str(out),
             "--limit", "2000"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
    outputs = []
    for out, proc in runs.items():
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        assert "heuristics + classifier" in stdout
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert time.monotonic() - started < 30
    trained = load_classifier(tmp_path / "a" / "lexicon.json")
    assert set(trained.lexicon.models) == {"zh", "en"}
    assert json.loads(outputs[0])["info"]["limit"] == 2000
