"""``routing_ceiling``: the best routing balanced accuracy per-agent offsets reach on a model's
probabilities (the benchmark's diagnostic for the routing target)."""

from scheduling.emotion.evaluation import routing_ceiling


def probs(sad: float = 0.0, anxious: float = 0.0, angry: float = 0.0, happy: float = 0.0, neutral: float = 0.0) -> dict[str, float]:
    return {"sad": sad, "anxious": anxious, "angry": angry, "happy": happy, "neutral": neutral}


def test_an_offset_finds_what_the_plain_argmax_misses() -> None:
    # Angry texts always put angry second to sad + anxious, but above what sad texts give angry:
    # an offset for the mediator separates them, neutral (however high) is never an answer.
    scored = [("angry", probs(sad=0.3, anxious=0.1, angry=0.35, neutral=0.25))] * 5
    scored += [("sad", probs(sad=0.6, angry=0.1, neutral=0.3))] * 5
    scored += [("anxious", probs(anxious=0.5, angry=0.2, happy=0.1, neutral=0.2))] * 5
    scored += [("happy", probs(happy=0.2, sad=0.1, neutral=0.7))] * 5
    scored += [("neutral", probs(neutral=1.0))] * 50  # not scored
    result = routing_ceiling(scored)
    assert result["balanced_accuracy"] == 1.0
    assert result["recall"] == {"sad": 1.0, "anxious": 1.0, "angry": 1.0, "happy": 1.0}
    assert result["log_offsets"]["mediator"] > 0


def test_texts_the_model_cannot_tell_apart_cap_the_ceiling() -> None:
    same = probs(sad=0.25, anxious=0.05, angry=0.3, happy=0.2, neutral=0.2)
    scored = [(label, same) for label in ("sad", "anxious", "angry", "happy") for _ in range(10)]
    # One agent for every text: only its own classes are right.
    assert routing_ceiling(scored)["balanced_accuracy"] == 0.5  # the comforter: sad and anxious


def test_no_emotional_text_has_no_ceiling() -> None:
    assert routing_ceiling([("neutral", probs(neutral=1.0))])["balanced_accuracy"] == 0.0
    assert routing_ceiling([])["recall"] == {}
