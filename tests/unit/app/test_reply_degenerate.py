"""The degenerate-text check: model loops and punctuation-only replies are caught, ordinary chat
replies (zh and en, short and long) are not."""

from __future__ import annotations

import pytest

from story.auto_reply.degenerate import DEGENERATE_REPETITION, MIN_REPETITION_CHARS, NO_WORDS, degenerate_problem
from app.turns.quality import problem_code, reply_problems

NORMAL_ZH = [
    "好的！",
    "嗯。",
    "哈哈哈哈哈",
    "好的好的，没问题！",
    "我在这里陪着你。",
    "哈哈哈哈哈哈哈哈哈哈哈哈，笑死我了",
    "我……我……我不知道该怎么说……",
    "嗯……我……其实……一直……都在……想你……",
    "我在这里陪着你。今天发生了什么让你这么难过？想说的话，我都听着。",
    "别担心，我们一起想办法。先深呼吸，然后告诉我最让你困扰的是哪一部分，好吗？我会一直在这里。",
    "第一步：列清单。第二步：排优先级。第三步：先做最难的。第四步：休息一下。",
    "周末要不要一起去爬山？天气预报说周六是晴天，气温二十度左右，很适合出门走走。",
    "你说得对，对对对！我也是这么想的。",
    "你可以试试跑步，你可以试试游泳，你可以试试瑜伽，总有一个适合你。",
    "我们一起去看海吧！看海的时候，我们一起去看日落，然后我们一起去吃好吃的。",
]
NORMAL_EN = [
    "Sure, let's do that.",
    "OK.",
    "Yes!!!",
    "No no no, that's not it!",
    "That sounds really hard. I'm here for you — do you want to talk about what happened, "
    "or would you rather I just keep you company for a while?",
    "Haha, no no no, that's not what I meant! Let me try again: I think we should go to the park "
    "first, then grab lunch.",
    "I'm so sorry to hear that. Losing a pet is never easy, and it's completely okay to feel sad "
    "about it. Take all the time you need.",
    "Step 1: write the list. Step 2: sort it. Step 3: start with the hardest item. Step 4: rest.",
    "Okay okay, I hear you. Really, really, I do.",
]


@pytest.mark.parametrize("text", NORMAL_ZH + NORMAL_EN)
def test_ordinary_replies_pass(text: str) -> None:
    assert degenerate_problem(text) is None


@pytest.mark.parametrize(
    ("language", "text"),
    [("zh-CN", t) for t in NORMAL_ZH] + [("en", t) for t in NORMAL_EN],
)
def test_ordinary_replies_pass_the_whole_quality_check(language: str, text: str) -> None:
    assert reply_problems(text, language=language, max_chars=4000, other_names=["周衡"], earlier_replies=[]) == []


@pytest.mark.parametrize(
    "text",
    [
        "；" * 300,
        "；；；…" * 300,
        "……",
        "？",
        "!!!",
        "😊👍",
        "。。。 。。。 。。。",
    ],
)
def test_punctuation_only_is_no_words(text: str) -> None:
    problem = degenerate_problem(text)
    assert problem is not None and problem_code(problem) == NO_WORDS


@pytest.mark.parametrize(
    "text",
    [
        "哈" * 300,
        "好" * MIN_REPETITION_CHARS,
        "a" * 300,
        "Nooooooooooooooooooooooooooooooooooo!",
        "好的" + "；" * 300,  # a loop after a normal start
        "我在这里陪着你。" + "；；；…" * 100,
        "我在这里陪着你。" + "哈" * 60,
        "That's great! " + "!" * 60,
        "我爱你。" * 20,
        "I love you! " * 20,
        "ha" * 100,
        "Ha ha ha " * 20,
        "我在这里陪着你。今天发生了什么让你这么难过？" * 3,
        "Sure, let's do that. " * 5,
        "我今天的心情是愉快的，我感到开心，我感到开心，我感到开心。",  # saved by Qwen 0.5B for a sad user
        "That sounds fun. I am so happy, I am so happy, I am so happy!",
        # saved by Qwen 0.5B with the Story on: one loop across three different clauses
        "你的内心世界变得温柔，听到来自她的声音，感受到温暖和温暖。她感到温暖和温暖的倾听者，被她的声音吸引，让她感到温暖和温暖。",
    ],
)
def test_loops_are_degenerate_repetition(text: str) -> None:
    problem = degenerate_problem(text)
    assert problem is not None and problem_code(problem) == DEGENERATE_REPETITION, problem


def test_a_sentence_said_twice_is_a_loop() -> None:
    """Qwen2.5-0.5B's saved replies said a sentence twice; a person does not, in one message."""
    problem = degenerate_problem("我在这里陪着你。今天发生了什么让你这么难过？" * 2)
    assert problem is not None and "said twice" in problem
    saved = ("爬山是一件非常有趣的事情，而且可以让你放松心情。你可以尝试一些简单的爬山技巧，比如爬山、爬山。"
             "你可以尝试一些简单的爬山技巧，比如爬山、爬山。")  # fmt: skip
    assert "said twice" in (degenerate_problem(saved) or "")
    assert "said twice" in (degenerate_problem("I think so. Let me check. I think so, really. Let me check.") or "")
    assert degenerate_problem("Really? Really? I can't believe you finally got the job!") is None  # short: emphasis
    assert degenerate_problem("好啊。我们周六去吧。好啊，我也想去看看那家店。") is None


def test_a_word_four_times_in_a_row_is_a_loop() -> None:
    problem = degenerate_problem("你可以尝试一些简单的爬山技巧，比如爬山、爬山、爬山、爬山、爬山。")
    assert problem is not None and "'爬山' 4 times" in problem
    assert degenerate_problem("好的，好的，好的，我马上就去帮你问问看。") is None  # three: emphasis


def test_short_emphasis_is_not_a_loop() -> None:
    assert degenerate_problem("好" * (MIN_REPETITION_CHARS - 1)) is None
    assert degenerate_problem("好的，好的，好的，我马上就去帮你问问看。") is None  # a 2-letter clause: emphasis
    assert degenerate_problem("真的吗？真的吗？你终于升职了，太为你高兴了！") is None  # twice is not a loop


@pytest.mark.parametrize(("language", "text"), [("zh-CN", "哈" * 300), ("zh-CN", "；" * 300), ("en", "a" * 300),
                                                ("th", "；" * 300), ("und", "ha" * 100)])  # fmt: skip
def test_quality_check_reports_the_degenerate_code(language: str, text: str) -> None:
    problems = reply_problems(text, language=language, max_chars=4000, other_names=[], earlier_replies=[])
    codes = {problem_code(p) for p in problems}
    assert codes & {NO_WORDS, DEGENERATE_REPETITION}


def test_the_detail_names_the_loop() -> None:
    assert "'哈'" in (degenerate_problem("哈" * 300) or "")
    assert "我爱你" in (degenerate_problem("我爱你。" * 20) or "")


def test_a_longer_clause_three_times_anywhere_is_a_loop() -> None:
    from story.auto_reply.degenerate import degenerate_problem

    smollm2 = ("I'm just so happy, and I'm just as happy as I've ever been, and I'm going to be very happy, and "
               "I'm just going to be so happy, and I'm going to just be happy, and I'm just going to be so happy, "
               "and I'm just going to be so happy.")  # fmt: skip
    assert (degenerate_problem(smollm2) or "").startswith("degenerate_repetition: the clause")
    twice = "I'm just going to be so happy today, and honestly I'm just going to be so happy tomorrow too."
    assert degenerate_problem(twice) is None  # twice is not a loop
    lists = "先说预算：住宿两千，交通一千；再说行程：第一天浅草寺，第二天秋叶原；最后说吃：拉面、寿司。"
    assert degenerate_problem(lists) is None


def test_a_clause_said_again_between_other_clauses_is_a_loop() -> None:
    """Qwen2.5-0.5B saved this Story reply: no sentence twice, no clause three times in a row."""
    saved = ("我今天可能需要一些安慰和鼓励，但是我很高兴能够与你聊天。我感到温暖和温暖的倾听者，被她的声音吸引，"
             "让她感到温暖和温暖的倾听者，被她的声音吸引，让她感到温暖和温暖的倾听者，被她的声音吸引，让她被听到来自她的声音。")
    assert "'被她的声音吸引' 3 times" in (degenerate_problem(saved) or "")
    assert "2 times" in (degenerate_problem("让她感到温暖和温暖的倾听者，你好吗，我们聊聊吧，让她感到温暖和温暖的倾听者。") or "")
    assert degenerate_problem("慢慢来，别着急，先睡一觉，明天再说，慢慢来。") is None  # a short clause again: emphasis
