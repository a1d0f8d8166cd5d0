"""Help-desk sign-offs are cut from the end of a reply; the rest of the reply, and replies that ask
or offer in their own words, stay. A reply that was only a sign-off is empty and regenerated."""

from __future__ import annotations

import pytest

from app.db.models import Agent
from app.llm.fakes import ScriptedModel
from app.llm.templates import PromptTemplates
from app.turns.actor_prompt import actor_prompt
from app.turns.replies import generate_checked
from app.turns.sign_off import sentences, trim_sign_off

LIA = Agent(id="lia", name="莉娅", aliases=[], headline="温柔的倾听者")


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        # Qwen2.5-0.5B's closing line under a companion reply
        ("我理解你的感受，今天确实不容易。如果你有任何问题或需要帮助，请随时告诉我。", "我理解你的感受，今天确实不容易。"),
        ("别难过啦，抱抱你！如果您还有其他问题，欢迎随时提问！", "别难过啦，抱抱你！"),
        ("加油！希望我的回答对你有帮助。", "加油！"),
        ("先列一下两边的利弊吧。\n如果你有其他问题，随时问我哦~", "先列一下两边的利弊吧。"),
        ("That sounds rough. Let me know if you have any other questions!", "That sounds rough."),
        ("Congrats on the raise! If you need anything else, feel free to ask.", "Congrats on the raise!"),
        ("Ugh, roommates. I hope this helps. Don't hesitate to reach out.", "Ugh, roommates."),
        ("如果你有任何问题或需要帮助，请随时告诉我。", ""),
    ],
)
def test_a_trailing_sign_off_is_cut(reply: str, kept: str) -> None:
    assert trim_sign_off(reply) == kept


@pytest.mark.parametrize(
    "reply",
    [
        "有什么想和我说的吗？",  # a question of its own
        "我一直在这里，随时可以找我聊。",  # an offer in the companion's words
        "作为一个AI，我没有情感。但我可以陪你聊聊。",  # only trailing sentences are looked at
        "Let me know how it goes with your roommate!",
        "I hope this helps. Take care.",
        "It's 1.5 times the pay, take it.",
        "",
    ],
)
def test_replies_without_a_trailing_sign_off_are_unchanged(reply: str) -> None:
    assert trim_sign_off(reply) == reply


def test_sentences_join_back() -> None:
    for text in ["好的。\n\n然后呢？", "Hi... ok!? fine", "「走吧。」他说。", "no end"]:
        assert "".join(sentences(text)) == text


async def test_a_reply_that_was_only_a_sign_off_is_regenerated() -> None:
    model = ScriptedModel().enqueue("actor", "如果你有任何问题或需要帮助，请随时告诉我。",
                                    "我在这里陪着你。如果您还有其他问题，欢迎随时提问！")  # fmt: skip
    prompt = actor_prompt(PromptTemplates(), LIA, language="zh-CN", recent=[], names={"lia": "莉娅"},
                          user_text="我今天好难过")  # fmt: skip
    reply = await generate_checked(model, prompt, LIA, max_chars=4000, earlier_replies=[])
    assert not reply.dropped and reply.text == "我在这里陪着你。" and reply.attempts == 2
    assert [p.split(":")[0] for p in reply.regenerated_for] == ["empty"]
