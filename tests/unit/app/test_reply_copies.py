"""The checks that keep unusable text out: an echo of the user, a repeat of the window, the prompt's
own wording, a speaker label anywhere. Thresholds are held against the labelled pairs."""

from __future__ import annotations

import pytest

from app.turns.quality import COPY_SHARE, copies, problem_code, reply_problems
from tests.unit.app.overlap_cases import ECHO_CASES, REPEAT_CASES


def _codes(text: str, **kw) -> list[str]:
    args = {"language": "zh-CN", "max_chars": 4000, "other_names": ["周衡", "阿乐"], "earlier_replies": [],
            "own_names": ["林溪"]} | kw  # fmt: skip
    return [problem_code(p) for p in reply_problems(text, **args)]


@pytest.mark.parametrize(("user", "reply", "echo"), ECHO_CASES)
def test_echo_threshold_separates_the_labelled_pairs(user: str, reply: str, echo: bool) -> None:
    assert (copies(reply, user) >= COPY_SHARE) is echo
    assert ("echoes_user" in _codes(reply, user_text=user, language="zh-CN" if not user.isascii() else "en")) is echo


@pytest.mark.parametrize(("earlier", "reply", "repeat"), REPEAT_CASES)
def test_repeat_threshold_separates_the_labelled_pairs(earlier: str, reply: str, repeat: bool) -> None:
    language = "en" if earlier.isascii() else "zh-CN"
    assert ("repeats_earlier" in _codes(reply, window=["别的话题", earlier], language=language)) is repeat


def test_prompt_wording_and_persona_runs_are_leaks_short_shared_words_are_not():
    rules = "只写林溪接下来要说的话：一到三个短句，像平时聊天一样自然，用你自己的话。不要重复用户或别人说过的话"
    assert "prompt_leak" in _codes("你之前的草稿被拒绝了，一到三个短句，像平时聊天一样自然", scaffolding=[rules])
    assert "prompt_leak" not in _codes("好的，我用自己的话说：别难过啦", scaffolding=[rules])
    persona = "性格：温柔体贴，善于倾听，总是先照顾别人的情绪再说自己的想法"
    assert "prompt_leak" in _codes("我温柔体贴，善于倾听，总是先照顾别人的情绪", persona=persona)
    assert "prompt_leak" not in _codes("我会先照顾好你的情绪，慢慢说", persona=persona)
    # Qwen2.5-0.5B's reply as Lia: eight words in a row (under the run), but nearly all of it persona
    lia = "Caring and warm; meets feelings first, then offers a little support. Soft, short sentences."
    assert "prompt_leak" in _codes("Caring, warm, meets feelings first, then offers a little support.", language="en",
                                   persona=lia)  # fmt: skip
    assert "prompt_leak" not in _codes("I hear you. It's okay to feel down; I'm here and we can take it slowly.",
                                       language="en", persona=lia)  # fmt: skip
    zh = "细心、温暖，先接住对方的情绪，再轻轻给一点支持。语气柔和，句子短。"
    assert "prompt_leak" in _codes("细心温暖，先接住对方的情绪，再轻轻给一点支持。", persona=zh)
    assert "prompt_leak" not in _codes("我会先接住你的情绪，再给你一点支持。", persona=zh)  # acting on it, 0.69
    english = "Write only what Mira says next: one to three short sentences, casual, in your own words."
    assert "prompt_leak" in _codes("Sure! One to three short sentences, casual, in your own words.", language="en",
                                   scaffolding=[english])  # fmt: skip
    assert "prompt_leak" not in _codes("In my own words: you did great today.", language="en", scaffolding=[english])


@pytest.mark.parametrize("text", [
    "别难过……周衡: 你好，我今天有点难过", "抱抱你。\n阿乐：哈哈哈", "我在呢 用户：谢谢你", "好的! User: thanks",
    "抱抱你。林溪：我还想说", "【周衡】：你好",
])  # fmt: skip
def test_a_speaker_label_anywhere_is_speaking_for_someone(text: str) -> None:
    assert "speaks_as_other" in _codes(text)


@pytest.mark.parametrize("text", ["我和周衡都在这里陪你", "周衡说得对，先休息一下吧", "林溪在这儿，别怕", "时间：晚上八点"])
def test_names_in_a_sentence_are_not_labels(text: str) -> None:
    assert "speaks_as_other" not in _codes(text)
