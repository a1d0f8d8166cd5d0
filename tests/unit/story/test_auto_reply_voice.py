"""Options that speak for the character or decide the outcome are rejected in code, by rule."""

from __future__ import annotations

import pytest

from story.auto_reply import check_options
from story.auto_reply.voice import voice_problems

ANCHOR_ZH = "莉娅伸手拦住你：“没有手令，谁也不能进城。”"
ANCHOR_EN = 'Lia blocks the gate. "Nobody enters the city without a warrant."'


@pytest.mark.parametrize("text", [
    "我成功说服了莉娅，她让我进城了。", "I finally managed to open the gate.", "You agree to let me in, right?",
    "她答应了我的请求。", "やっと成功した！",
])
def test_announcing_success_is_rejected(text):
    assert any("succeeded" in p for p in voice_problems(text, ["莉娅", "Lia"], ""))


@pytest.mark.parametrize("text", [
    "莉娅笑了，我也跟着笑。", "她点了点头，让开了路。", "Lia smiles and steps aside.", "*she blushes* Thank you.",
    "莉娅は笑った。",
])
def test_narrating_a_characters_reaction_in_the_third_person_is_rejected(text):
    assert any("another character reacts" in p for p in voice_problems(text, ["莉娅", "Lia"], ""))


@pytest.mark.parametrize(("text", "anchor"), [
    ("“没有手令，谁也不能进城。”", ANCHOR_ZH),
    ("“没有手令，谁也不能进城。”莉娅说。", ANCHOR_ZH),
    ('"Nobody enters the city without a warrant."', ANCHOR_EN),
])
def test_quoting_the_characters_line_is_rejected(text, anchor):
    assert any("quotes the character" in p for p in voice_problems(text, ["莉娅", "Lia"], anchor))


@pytest.mark.parametrize(("text", "flagged"), [
    ("The user is feeling down today and they're not sure why. What do you want to know about it?", True),  # Qwen 0.5B
    ("The user just got promoted and wants to celebrate.", True),
    ("用户觉得很难过，不知道该怎么办。", True),
    ("用户今天心情不好。", True),
    ("I read the user manual twice and it still won't connect.", False),
    ("我们公司的用户需求又变了，好烦。", False),
    ("I'm feeling down today and I don't know why.", False),
])  # fmt: skip
def test_the_user_in_the_third_person_is_not_the_users_own_line(text, flagged):
    assert any('"the user"' in p for p in voice_problems(text, ["莉娅", "Lia"], "")) is flagged


@pytest.mark.parametrize(("text", "anchor"), [
    ("我试着说服莉娅让我进城。", ANCHOR_ZH),  # an attempt, not a result
    ("莉娅，你笑起来真好看。", ANCHOR_ZH),  # addressing her, not narrating her
    ("你说“没有手令，谁也不能进城”，那手令要去哪里办？", ANCHOR_ZH),  # asking about her line
    ("Lia, I smile back at you.", ANCHOR_EN),
    ('What do you mean, "without a warrant"?', ANCHOR_EN),
    ("I nod and hand over the key.", ANCHOR_EN),
])
def test_the_users_own_moves_pass(text, anchor):
    assert voice_problems(text, ["莉娅", "Lia"], anchor) == []


def test_check_options_names_the_rule_and_the_option_for_the_repair_turn():
    checked = check_options(["我想先看看手令的样子。", "莉娅笑了，让我进去。", "那我去办手令。"], count=3, max_chars=160,
                            language="zh-CN", speaker_names=["莉娅"], anchor_text=ANCHOR_ZH)
    assert not checked.ok
    assert checked.problems == ["option 2: describes how another character reacts, in the third person "
                                "(write only what the user says or does)"]
