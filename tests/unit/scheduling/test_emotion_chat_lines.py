"""The everyday chat lines (``scheduling/emotion/chat_lines``): a ``plain`` source per language,
all neutral, whose test lines are never training lines, scored by false alarms."""

from pathlib import Path

from scheduling.emotion.evaluation import held_out, plain_figures
from scheduling.emotion.model import UserEmotion
from scheduling.emotion.sources import CHAT_LINES, load_chat_lines


def test_each_language_has_a_plain_neutral_source_with_disjoint_splits():
    sources = {s.name: s for s in load_chat_lines()}
    assert set(sources) == {"chat_zh", "chat_en"}
    for s in sources.values():
        assert s.plain and s.classes == ("neutral",)
        assert len(s.train) > 100 and s.validation and len(s.test) >= 50
        train = {text for _, text, _ in s.train}
        assert not train & {text for _, text, _ in s.validation}
        assert not train & {text for _, text, _ in s.test}
        assert {label for _, _, label in s.train + s.validation + s.test} == {"neutral"}


def test_lines_are_cleaned_and_deduplicated(tmp_path: Path):
    for lang in ("zh", "en"):
        (tmp_path / f"{lang}.txt").write_text("  晚饭  吃什么 \n\n晚饭 吃什么\nok\n", encoding="utf-8")
        (tmp_path / f"{lang}_test.txt").write_text("我到家了\n", encoding="utf-8")
    zh = load_chat_lines(tmp_path)[0]
    assert sorted(text for _, text, _ in zh.train + zh.validation) == ["ok", "晚饭 吃什么"]
    assert [text for _, text, _ in zh.test] == ["我到家了"]


def _emotion(primary: str, comfort: bool = False, deescalation: bool = False) -> UserEmotion:
    return UserEmotion(primary_emotion=primary, intensity=0.3, needs_comfort=comfort, needs_advice=False,  # type: ignore[arg-type]
                       needs_deescalation=deescalation, social_energy="medium", reason="test")


def test_a_false_alarm_is_a_need_for_comfort_or_deescalation():
    read = {"a": _emotion("neutral"), "b": _emotion("sad", comfort=True), "c": _emotion("neutral", deescalation=True),
            "d": _emotion("confused")}
    items = [(k, k, "neutral") for k in read]
    figures = plain_figures(items, read.__getitem__)
    assert figures == {"n": 4, "false_alarm": 0.5, "neutral": 0.75}


def test_held_out_scores_a_plain_source_by_false_alarms():
    zh = load_chat_lines(CHAT_LINES)[0]
    figures = held_out(zh, lambda text: _emotion("neutral"))
    assert figures == {"n": len(zh.test), "false_alarm": 0.0, "neutral": 1.0}
