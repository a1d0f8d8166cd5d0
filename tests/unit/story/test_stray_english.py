"""A Chinese reply with an English function word inside a sentence is in the wrong script."""

from __future__ import annotations

import pytest

from story.auto_reply.text import script_problem


@pytest.mark.parametrize("text", [
    "请随时与 me交流您的看法或建议。",  # Qwen2.5-0.5B, saved twice in one benchmark run
    "我和you一起去吧。", "这是the最好的办法。", "我会陪着你，and 我们一起想办法。",
])  # fmt: skip
def test_an_english_function_word_inside_chinese_is_the_wrong_script(text: str) -> None:
    assert "English word inside Chinese" in (script_problem(text, "han") or "")


@pytest.mark.parametrize("text", [
    "我用 AI 写作业。", "这个app很好用！", "周末去 KTV 吧！", "我今天听了 Taylor Swift 的新歌。", "OK，我们明天见。",
    "I'm here for you.",  # no Han at all: the other message
])  # fmt: skip
def test_names_brands_and_loanwords_pass(text: str) -> None:
    problem = script_problem(text, "han")
    assert problem is None or "English word" not in problem
