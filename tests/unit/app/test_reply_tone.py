"""``glad_about_distress``: gladness at the user's bad feeling is text no user would keep."""

from __future__ import annotations

import pytest

from app.turns.quality import problem_code, reply_problems
from app.turns.tone import glad_about_distress, sorry_about_joy


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


FUNNY = "我今天看到一个超好笑的视频，笑死我了"


@pytest.mark.parametrize(("user", "reply", "flagged"), [
    ("My roommate broke my headphones again and I'm furious.", "I'm glad you're feeling better! It's okay to feel upset.",
     True),  # Qwen2.5-0.5B, saved as the joker's reply
    ("I feel really down today and I don't know why.", "So glad to hear you're feeling much better.", True),
    ("室友又把我的耳机弄坏了，气死我了！", "很高兴你感觉好多了！", True),
    ("I was sad yesterday but I'm feeling better now.", "Glad you're feeling better!", False),  # the user said so
    ("昨天很难过，今天好多了。", "很高兴你好多了！", False),
    ("I got promoted today!", "Glad you're feeling better!", False),  # nothing bad said: not this rule
])  # fmt: skip
def test_glad_the_user_feels_better_after_a_bad_line_that_says_no_such_thing(user: str, reply: str, flagged: bool) -> None:
    assert (glad_about_distress(reply, user) is not None) is flagged


@pytest.mark.parametrize(("user", "reply"), [
    (FUNNY, "对不起听到消息！"),  # Qwen2.5-0.5B, Story on: saved as the joker's whole answer
    (FUNNY, "听到这个消息我很难过，你还好吗？"), ("我升职了！太开心了", "真遗憾，别灰心。"),
    ("I got promoted today!", "Sorry to hear that. Do you want to talk?"),
    ("That video was hilarious lol", "I'm so sorry you had to see that."),
])  # fmt: skip
def test_condolences_for_a_happy_line_are_flagged(user: str, reply: str) -> None:
    assert sorry_about_joy(reply, user) is not None
    problems = reply_problems(reply, language="en" if user.isascii() else "zh-CN", max_chars=2000, other_names=[],
                              earlier_replies=[], user_text=user)  # fmt: skip
    assert "sorry_about_joy" in {problem_code(p) for p in problems}


@pytest.mark.parametrize(("user", "reply"), [
    (FUNNY, "哈哈，什么视频？发来看看"), (FUNNY, "抱歉，我刚看到消息，什么视频？"),
    ("室友又把我的东西弄坏了，气死我了！", "对不起听到这个，太过分了。"),  # bad news: condolences fit
    ("我升职了，可是要搬去外地，有点难过", "听到要搬走我也有点难过，不过恭喜你升职！"),
    ("I got promoted but my dog died yesterday", "I'm so sorry to hear about your dog."),
    ("That video was hilarious lol", "Sorry, I missed that. Which one?"),
    ("我今天有点难过，不知道该怎么办。", "抱歉听到你难过，我在这儿。"),  # nothing happy in the line
])  # fmt: skip
def test_condolences_for_bad_news_or_an_apology_pass(user: str, reply: str) -> None:
    assert sorry_about_joy(reply, user) is None
