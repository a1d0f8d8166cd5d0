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
        ("有需要的话我们可以一起列个清单。如果还有其他问题需要帮助，欢迎随时告诉我。", "有需要的话我们可以一起列个清单。"),  # Qwen2.5-0.5B
        ("别难过啦，抱抱你！如果您还有其他问题，欢迎随时提问！", "别难过啦，抱抱你！"),
        ("加油！希望我的回答对你有帮助。", "加油！"),
        ("先列一下两边的利弊吧。\n如果你有其他问题，随时问我哦~", "先列一下两边的利弊吧。"),
        ("That sounds rough. Let me know if you have any other questions!", "That sounds rough."),
        ("I'm not sure why you feel down today. Is there anything else I can help you with?", "I'm not sure why you feel down today."),  # Qwen2.5-0.5B
        ("It's okay to feel down. Don't worry, I'm here to help you.", "It's okay to feel down."),
        ("I'm here for you.", "I'm here for you."),  # a friend's line, not a sign-off
        ("Congrats on the raise! If you need anything else, feel free to ask.", "Congrats on the raise!"),
        ("Ugh, roommates. I hope this helps. Don't hesitate to reach out.", "Ugh, roommates."),
        ("如果你有任何问题或需要帮助，请随时告诉我。", ""),
        ("抱抱你。\n\n如果你有任何其他问题或需要进一步的帮助，请随时告诉我！", "抱抱你。"),  # Qwen2.5-0.5B, Story on
        ("你愿意说说吗？\n\n如果需要进一步的帮助，请随时告知您的需求，我会尽力提供更合适的建议和支持。", "你愿意说说吗？"),  # Qwen2.5-0.5B, Story on
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


def test_a_closing_sentence_the_window_already_had_is_cut() -> None:
    tic = "同时，也要注意个人的生活习惯和饮食习惯，以提高生活质量。"
    window = ["我建议多休息。" + tic, "今天天气不错"]
    reply = "我建议你可以先存钱，因为存钱可以减少利息。" + tic
    assert trim_sign_off(reply, window) == "我建议你可以先存钱，因为存钱可以减少利息。"
    assert trim_sign_off(tic, window) == tic  # nothing else: left whole for repeats_earlier to name
    assert trim_sign_off("好呀，抱抱你！", ["抱抱你！"]) == "好呀，抱抱你！"  # short lines may come again
    assert trim_sign_off(tic + "你觉得呢？", window) == tic + "你觉得呢？"  # only the end is looked at


def test_a_reply_wrapped_in_quotes_loses_them() -> None:
    assert trim_sign_off("“爬山是一种放松身心的好方式。”") == "爬山是一种放松身心的好方式。"
    assert trim_sign_off('"Sounds fun!"') == "Sounds fun!"
    assert trim_sign_off("“好”和“坏”都要想。") == "“好”和“坏”都要想。"
    assert trim_sign_off("“你说得对。”我想了想，“走吧。”") == "“你说得对。”我想了想，“走吧。”"


def test_if_you_need_help_is_a_sign_off() -> None:
    assert trim_sign_off("That's completely normal. If you need help, feel free to ask.") == "That's completely normal."
