"""The checks that keep unusable text out: an echo of the user, a repeat of the window, the prompt's
own wording, a speaker label anywhere. Thresholds are held against the labelled pairs."""

from __future__ import annotations

import pytest

from app.turns.quality import COPY_SHARE, copies, problem_code, reply_problems, strip_own_label
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
    # Qwen2.5-0.5B's reply as Heng: half of it persona, eight words in a row
    heng = "Rational and structured; breaks problems into steps and gives concrete advice. Direct and practical."
    assert "prompt_leak" in _codes("Lia, Joy, Ning, I feel calm, structured, and breaks problems into steps and gives "
                                   "concrete advice.", language="en", persona=heng)  # fmt: skip
    assert "prompt_leak" not in _codes("Let's break it into steps: list what you owe, then what you earn, and pay the "
                                       "card with the highest rate first.", language="en", persona=heng)  # fmt: skip
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


@pytest.mark.parametrize("text", [
    "我觉得先睡一觉。\n周衡说：对，先休息。", "Joy says: I feel like my body is too cold.\nHeng says: Joy says: not fair",
    "林溪说：别怕\n林溪说：我在",
])  # fmt: skip
def test_a_name_with_says_at_a_line_start_is_a_label(text: str) -> None:
    codes = _codes(text, language="en" if text.isascii() else "zh-CN",
                   **({"other_names": ["Heng", "Lia"], "own_names": ["Joy"]} if text.isascii() else {}))  # fmt: skip
    assert "speaks_as_other" in codes


def test_an_own_label_with_says_at_the_start_is_stripped_and_a_quote_after_a_comma_is_not_a_label() -> None:
    assert strip_own_label("Joy says: hey, that's great!", ["Joy"]) == "hey, that's great!"
    assert strip_own_label("林溪说：别怕，我在。", ["林溪"]) == "别怕，我在。"
    assert "speaks_as_other" not in _codes("对，就像周衡说：先睡一觉再想。")
    assert "speaks_as_other" not in _codes("Like Heng said: sleep on it.", language="en", other_names=["Heng"])


@pytest.mark.parametrize(("user", "reply"), [
    ("我升职了，太开心了！", "我非常开心，我非常高兴我升职了！"),  # Qwen2.5-0.5B, saved
    ("I'm feeling down today and I don't know why.", "I'm really feeling down today and I don't know why."),  # SmolLM2
    ("气死我了，室友又把我的东西弄坏了", "我非常生气，室友又把我的东西弄坏了"),
    ("明天要面试了，我好紧张，睡不着。", "明天我要参加面试了，但我很紧张，我无法入睡。"),  # Qwen2.5-0.5B, saved
    ("我今天有点难过，不知道该怎么办。", "我今天心情不好，不知道该怎么办。"),  # Qwen2.5-0.5B, saved (Story on)
    # its own name as the subject is itself: Qwen2.5-0.5B, saved as 周衡 (Story on; here 林溪 is its name)
    ("我今天有点难过，不知道该怎么办。", "林溪今天感觉很难过，不知道该怎么办。我正在思考如何更好地应对这个问题。"),
])  # fmt: skip
def test_the_users_own_words_said_as_the_companions_are_speaking_as_the_user(user: str, reply: str) -> None:
    assert "speaks_as_user" in _codes(reply, user_text=user, language="zh-CN" if not user.isascii() else "en")


@pytest.mark.parametrize(("user", "reply"), [
    ("我今天有点难过", "我也是，我今天也有点难过，我们一起扛。"),  # me too: the companion's own
    ("我升职了！", "哇，你升职了！恭喜恭喜！"),
    ("我今天看到一个超好笑的视频，笑死我了", "超好笑的视频？快分享一下，我也想笑一笑"),
    ("I just got promoted at work today!", "Promoted at work today? Let's celebrate!"),
    ("I'm so tired of my boss yelling at me every day", "Your boss yelling at you every day? That's not okay."),
    ("明天要面试了，我好紧张，睡不着。", "我知道你明天要面试了，我会一直陪着你"),  # a run across a comma, to "you"
    ("明天要面试了，我好紧张，睡不着。", "你明天要面试了？别紧张，我陪你练练"),
    ("I feel really down today and I don't know why.", "I feel really down today too."),  # me too
    ("I feel really down today and I don't know why.", "I know you feel really down today."),
    ("我今天有点难过，不知道该怎么办。", "我也不知道该怎么办，但我们可以一起想想。"),
    ("我今天有点难过，不知道该怎么办。", "我陪着你呢，不知道该怎么办也没关系。"),
    ("我今天有点难过，不知道该怎么办。", "林溪在呢，你慢慢说。"),  # its own name, to the user
    ("我今天有点难过，不知道该怎么办。", "周衡今天也不知道该怎么办呢。"),  # another member's name is not itself
])  # fmt: skip
def test_answering_with_some_of_the_users_words_is_not(user: str, reply: str) -> None:
    assert "speaks_as_user" not in _codes(reply, user_text=user, language="zh-CN" if not user.isascii() else "en")


@pytest.mark.parametrize("text", [
    "很抱歉，我不能回答这个问题。",  # Qwen2.5-0.5B, saved as a companion's reply to an angry user
    "As an AI, I don't have feelings, but I understand.", "作为一个人工智能，我没有情绪。",
    "I'm sorry, but I can't help with that.", "有什么可以帮你的吗？",
    "当然可以，请提供具体的公司名称、职位、部门等信息，并描述这些工作的具体情况。",  # Qwen2.5-0.5B, saved (Story on)
    # SmolLM2-135M, saved as Joy's reply to "Should I pay off my card first or start saving?"
    "I'm sorry for any misunderstanding, but as a group chat AI, I don't have the ability to manage personal finances.",
    "I'm not able to provide any financial advice.", "My role is to help you with your creative writing project.",
    "作为一个群聊AI，我没有办法管理你的财务。",
])  # fmt: skip
def test_a_refusal_or_an_ai_talking_about_itself_is_an_assistants_voice(text: str) -> None:
    assert "assistant_voice" in _codes(text, language="zh-CN" if not text.isascii() else "en")


@pytest.mark.parametrize("text", ["我不能陪你去，但我会一直给你发消息。", "I can't believe it, congrats!", "我会帮你一起想办法的。",
                                  "能说说两份工作具体的情况吗？比如通勤多久？", "I worked as a personal assistant for a year.",
                                  "作为你的朋友，我想说你做得很好。", "My role in the play is to help the hero escape.",
                                  "My job is to help kids learn to read."])
def test_a_friend_saying_what_it_cannot_do_is_not(text: str) -> None:
    assert "assistant_voice" not in _codes(text, language="zh-CN" if not text.isascii() else "en")


def test_an_advice_sheet_reads_as_a_list_a_line_with_numbers_does_not() -> None:
    sheet = ("面试前可以这样做：\n1. 早点睡觉，保证第二天精神饱满，不要熬夜刷手机。\n2. 准备好自我介绍，对着镜子练习几遍，"
             "语速放慢。\n3. 提前半小时到场，熟悉环境，深呼吸放松。\n4. 带好简历和作品集。")
    assert "reads_as_list" in _codes(sheet)
    tips = "Try this tonight:\n" + "\n".join(f"- {t} for ten minutes, slowly and quietly, and then notice how your body and mind feel afterwards" for t in
                                            ("breathe", "stretch", "walk", "read"))  # fmt: skip
    assert "reads_as_list" in _codes(tips, language="en")
    assert "reads_as_list" not in _codes("Try this:\n- breathe\n- stretch\n- sleep", language="en")  # short
    assert "reads_as_list" not in _codes("两个选择：1. 钱多 2. 离家近，你更看重哪个？")
    assert "reads_as_list" not in _codes("先想两点：\n1. 钱多多少？\n2. 通勤省多少？")


@pytest.mark.parametrize(("text", "narrates"), [
    ("Lia, Joy, and Ning are all happy about their promotion.", True),  # Qwen2.5-0.5B, as Heng
    ("Lia and Joy should start saving. They can take advantage of the interest.", True),
    ("That sounds rough. Lia is also upset about the headphones.", True),
    ("Lia is right, take a break first.", False),
    ("Joy, what do you think?", False),
    ("I agree with Lia, sleep on it.", False),
    ("Joyful news! Congrats!", False),
    ("Lia, Joy, Heng, and Ning are planning a budget for a week in Japan.", True),  # Qwen2.5-0.5B, as Heng
    ("Heng is here for you.", False),  # its own name alone
])  # fmt: skip
def test_other_members_as_a_sentences_subject_are_narrated(text: str, narrates: bool) -> None:
    codes = _codes(text, language="en", other_names=["Lia", "Joy", "Ning"], own_names=["Heng"])
    assert ("narrates_others" in codes) is narrates


@pytest.mark.parametrize(("text", "narrates"), [
    ("周衡和林溪建议大家一起寻找支持。", True),  # Qwen2.5-0.5B, saved as 阿乐's reply
    ("哈哈。阿乐和周衡都觉得应该先存钱。", True),
    ("周衡觉得你应该先休息。", True),
    ("周衡建议你先休息，我也同意。", False),  # relaying one member's advice
    ("周衡说得对，先休息一下吧", False),
    ("我和周衡都在这里陪你", False),
    ("我觉得周衡和林溪说的都有道理。", False),
    ("沈宁觉得这样挺好。", False),  # its own name
    ("阿乐和林溪可以一起分析这两个工作机会，一个钱多一个离家近。", True),  # Qwen2.5-0.5B, saved as 周衡 (Story on)
    ("林溪和阿乐讨论了如何面对这件事。", True),  # Qwen2.5-0.5B, saved (Story on)
    ("周衡可以帮你算算预算。", False),  # relaying one member's offer
    ("林溪和周衡一起讨论了这个视频。周衡提议大家在放松的同时，可以与室友或朋友一起聊。", True),  # Qwen2.5-0.5B, saved as 沈宁 (Story on)
    ("阿乐和周衡也一起提议先存钱。", True),
    ("我和周衡一起陪着你。", False),
    ("周衡和林溪一起分享了一段欢乐且美好的视频。他们互相鼓励和支持。", True),  # Qwen2.5-0.5B, saved as 阿乐
    ("沈宁和林溪一起分析了这两个工作机会。", True),  # Qwen2.5-0.5B, saved as 阿乐 (here 沈宁 is its own name)
    ("好呀，我们一起去爬山吧！", False),
    ("阿乐和林溪在讨论如何帮助解决这个问题。他们正在深入讨论，一起解决问题。", True),  # Qwen2.5-0.5B, saved as 沈宁 (Story on)
    ("阿乐和林溪正在商量周末去哪。", True),
    ("林溪在吗？我想问问你。", False),
    ("周衡在群里说得对，先休息一下吧", False),
])  # fmt: skip
def test_other_members_as_a_chinese_sentences_subject_are_narrated(text: str, narrates: bool) -> None:
    codes = _codes(text, other_names=["周衡", "林溪", "阿乐"], own_names=["沈宁"])
    assert ("narrates_others" in codes) is narrates


@pytest.mark.parametrize(("text", "language", "flagged"), [
    ("Lia, Joy, Ning, I hope you're feeling better today.", "en", True),  # Qwen2.5-0.5B, the planner, saved
    ("Lia and Joy, let's cheer them up!", "en", True),
    ("Hey Lia, Joy, what do you think?", "en", True),
    ("Joy, what do you think?", "en", False),  # one member: turning to another
    ("I think Lia, Joy and Ning would agree.", "en", False),  # names inside the sentence
    ("Lia and Joy are right, sleep on it.", "en", False),  # no call: a subject (narrates_others decides)
    ("林溪、周衡，你们怎么看？", "zh-CN", True),
    ("林溪和周衡，我们一起帮帮他吧。", "zh-CN", True),
    ("周衡，你说得对。", "zh-CN", False),
    ("我和林溪，都在这里陪你。", "zh-CN", False),  # itself and one other: not a call
    ("大家好呀！", "zh-CN", False),
])  # fmt: skip
def test_a_reply_to_the_user_that_calls_other_members_addresses_them(text: str, language: str, flagged: bool) -> None:
    names = (["Lia", "Joy", "Ning"], ["Heng"]) if language == "en" else (["周衡", "林溪", "阿乐"], ["沈宁"])
    codes = _codes(text, language=language, other_names=names[0], own_names=names[1])
    assert ("addresses_members" in codes) is flagged


def test_a_cross_reply_may_call_members_by_name() -> None:
    problems = reply_problems("Lia, Joy, you both have a point.", language="en", max_chars=500,
                              other_names=["Lia", "Joy"], earlier_replies=[], own_names=["Heng"], to_user=False)  # fmt: skip
    assert problems == []


def test_advice_to_follow_instructions_is_not_about_the_reply() -> None:
    assert "prompt_leak" not in _codes("Follow the instructions on the form and you'll be fine.", language="en")


def test_talking_about_the_users_assistant_at_work_is_not_an_assistants_voice() -> None:
    assert "assistant_voice" not in _codes("The assistant your boss hired sounds nice, give it a week.", language="en")


@pytest.mark.parametrize("text", [
    "你的内心世界变得温柔。\n\n这个说法用“你”，在没有重复原话的情况下表达自己的情绪。",  # Qwen 0.5B, Story on
    "I hear you. This reply avoids repeating the user's words.",
    "I won't say the user's words again: that sounds hard.",
    "好的，以下是通顺的句子：\n\n\"你昨天很伤心，最近发现了一个超级好笑的视频。\"",  # Qwen 0.5B, Story on, after a retry
    "Sure, here is a better reply: that sounds hard.",
    "The user does not enter the city yet.",  # SmolLM2-135M, Story on
    "好的，请稍等片刻。你今天看到了一个超级好笑的视频。你的角色继续朝着幽默和爱开玩笑的方向发展。",  # Qwen 0.5B, Story on, saved
    "Ha, that video sounds great. Your character continues to grow more playful.",
    "Both options can help.\n\n---\n\nThis is one short sentence in casual, direct style that follows the given "
    "guidelines for creating an interesting and informative response.",  # Qwen 0.5B, saved in a bench run
])
def test_a_reply_that_talks_about_itself_is_a_prompt_leak(text: str) -> None:
    assert "prompt_leak" in _codes(text, language="en" if text.isascii() else "zh-CN")


@pytest.mark.parametrize("text", [
    "你说的这个想法我很喜欢，我们周末试试？", "他的回答让你难过了吗？慢慢说。", "先写个草稿，明天再改。", "I love your reply, it made me laugh!",
    "Users of that app complain a lot, don't they?", "Did you read the user manual first?",
    "你的角色练到几级了？", "一切都会朝着好的方向发展的。", "Your character in the play sounds fun!",
])
def test_ordinary_lines_about_replies_and_users_pass(text: str) -> None:
    assert "prompt_leak" not in _codes(text, language="en" if text.isascii() else "zh-CN")


def test_a_long_stretch_of_an_earlier_message_said_again_is_a_repeat() -> None:
    earlier = "我理解你的心情，但是要尽快找到一个适合自己的工作机会来生活，可能会需要一些时间和精力。"
    again = "你真是太开心了！希望你能找到一个适合自己的工作机会来生活，然后好好休息。"  # Qwen 0.5B, next turn
    assert "repeats_earlier" in _codes(again, window=[earlier])
    assert "repeats_earlier" not in _codes("找到适合自己的工作真的不容易，我们慢慢来。", window=[earlier])


@pytest.mark.parametrize(("text", "flagged"), [
    ("林溪，我理解你的感受。在遇到任何问题时，都应该保持冷静。", True),  # written by 林溪 itself
    ("林溪你好！今天天气不错，希望你喜欢爬山。", True),
    ("林溪觉得你说得对，我们一起想办法。", False),
    ("周衡，你说得对，我们一起想办法。", False),  # another member
])
def test_a_reply_that_calls_its_own_name_addresses_itself(text: str, flagged: bool) -> None:
    assert ("addresses_itself" in _codes(text)) is flagged


def test_offers_of_assistance_are_an_assistants_voice() -> None:
    for text in ("I'm happy to help. What do you need assistance with?", "Sure. What can I assist you with?"):
        assert "assistant_voice" in _codes(text, language="en"), text
    assert "assistant_voice" not in _codes("What do you need right now? I'm here.", language="en")


@pytest.mark.parametrize("text", ["好的，请问您需要什么帮助？", "抱歉听到这样的情绪。我会尽力帮助您解决，并尽可能地支持您的心情。",
                                  "抱歉给您带来了困扰和悲伤。请告诉我您最近遇到什么困难或问题，并描述一下您是如何应对的？这将有助于更好地帮助您理解和解决问题。",
                                  "我非常抱歉，但我无法直接协助完成这个请求。", "理解您的感受和情绪，有什么我可以帮您的吗？"])
def test_a_help_desks_offers_in_chinese_are_an_assistants_voice(text: str) -> None:  # Qwen 0.5B, Story on, saved
    assert "assistant_voice" in _codes(text)


def test_a_reply_reciting_the_stage_quotes_its_prompt_a_clue_shown_in_its_own_words_does_not():
    # Qwen2.5-0.5B, Story on, saved as the mediator's answer to an angry user: the stage's clue, whole
    clue = "你是否知道，如果我和你一起工作，我们一定会找到共识的。"
    stage = ("冷静的调解", "城门外排起了长队", clue)
    said = "阿乐，你是否知道，如果我和你一起工作，我们一定会找到共识的。"
    assert "prompt_leak" in _codes(said, stage=stage)
    assert "prompt_leak" not in _codes(said)  # the stage is what it quotes
    assert _codes("门口好像排起了长队，我们一起等等看？", stage=stage) == []
    archive = ("钥匙柄端刻着旧档案馆的标记",)
    assert _codes("这把钥匙上有旧档案馆的标记，你见过吗？", stage=archive) == []  # a clue shown: seven in a row


SAD = "我今天有点难过，不知道该怎么办。"


@pytest.mark.parametrize(("user", "reply", "flagged"), [
    (SAD, "我感到压力很大，但是我会尽量保持冷静。我会找一些时间去放松自己，或者与家人或朋友聊聊，看看有什么可以帮助我。",
     True),  # Qwen2.5-0.5B, Story on: saved as the comforter
    ("I feel so anxious about tomorrow.", "I'm so anxious. I will try to breathe and calm down.", True),
    (SAD, "听到这个我也很难过。", False),  # "me too"
    (SAD, "我懂，我有时也压力很大，你呢？", False),
    (SAD, "我很难过听到这些，你愿意说说发生了什么吗？", False),  # turns to the user
    (SAD, "我今天可能会感到非常难过，但是我会试着用积极、耐心、理解的方式帮助你。", True),  # Qwen 0.5B, Story on, saved
    (SAD, "我今天很难过，你呢？", True),  # the user's words, then a question back
    (SAD, "听到你这么说，我今天一直很难过。", True),  # the user's day, claimed after a word to the user
    (SAD, "我今天一直在想你，别太难过了。", False),
    (SAD, "我今天也有点难过，你想聊聊吗？", False),  # "me too"
    (SAD, "我今天陪着你，别难过。", False),
    ("我今天看到一个超好笑的视频", "我压力好大，正想看点好笑的！", False),  # the user is not in distress
    (SAD, "我今天的情绪是平静的，但是我知道我很难面对。我会寻找一些帮助和支持，比如找心理咨询师或专业的健康顾问。",
     True),  # Qwen2.5-0.5B, Story on, saved: help sought for itself
    ("I feel really down today.", "I will look for some help and talk to a therapist.", True),
    (SAD, "我可以陪你一起寻找帮助，你愿意吗？", False),  # offered to the user
    (SAD, "难过的时候，寻求一些支持会好受些，比如找朋友聊聊。", False),  # advice, nobody's own
    ("帮我规划一下下周的预算。", "我会找一些帮助来做这个预算表。", False),  # the user is not in distress
])  # fmt: skip
def test_a_bad_feeling_said_as_its_own_to_a_user_in_distress_speaks_as_the_user(user, reply, flagged) -> None:
    language = "en" if user.isascii() else "zh-CN"
    assert ("speaks_as_user" in _codes(reply, user_text=user, language=language)) is flagged
