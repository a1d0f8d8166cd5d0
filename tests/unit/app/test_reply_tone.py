"""``glad_about_distress``: gladness at the user's bad feeling is text no user would keep."""

from __future__ import annotations

import pytest

from app.turns.quality import problem_code, reply_problems
from app.turns.tone import glad_about_distress


def _codes(text: str, language: str) -> set[str]:
    problems = reply_problems(text, language=language, max_chars=2000, other_names=["周衡", "Heng"],
                              earlier_replies=[], own_names=["林溪", "Lia"])  # fmt: skip
    return {problem_code(p) for p in problems}


@pytest.mark.parametrize("text", [
    "I'm glad you're feeling down today.",  # Qwen2.5-0.5B, saved as Heng's reply to sad, anxious and angry lines
    "I'm so happy to hear that you are really stressed out!", "Great that you feel so lonely.",
    "很高兴你今天很难过。", "真开心听到你压力很大！", "太好了你有点焦虑",
])  # fmt: skip
def test_gladness_at_a_bad_feeling_is_flagged(text: str) -> None:
    assert glad_about_distress(text) is not None
    assert "glad_about_distress" in _codes(text, "en" if text.isascii() else "zh-CN")


@pytest.mark.parametrize("text", [
    "I'm glad you told me you're feeling down.", "I'm glad you're here. Sorry you're feeling down today.",
    "Glad you're feeling better!", "I'm happy you're excited about the new job.", "It's good you're not alone in this.",
    "很高兴你愿意告诉我你很难过。", "你难过的时候我会陪着你，很高兴认识你。", "太好了！你升职了，一点都不难过吧？",
    "真好，你今天心情不错。", "Haha, I'm glad you're bad at lying.", "Glad you're low-key into it.",
    "So happy you're mad about this show too!", "I'm glad you're lost in a good book.",
    "Glad you're down for the trip!", "So glad you're down to try it.",
])  # fmt: skip
def test_gladness_about_something_else_passes(text: str) -> None:
    assert glad_about_distress(text) is None
