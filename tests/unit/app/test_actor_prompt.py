"""The actor prompt is a conversation: own lines as assistant turns, others' as labelled user turns,
rules in the conversation's language, no scaffolding phrase; a retry adds one short correction to
the system message and never the rejected text or a problem's details."""

from __future__ import annotations

from app.db.models import Agent
from app.llm.templates import PromptTemplates
from app.turns.actor_prompt import actor_prompt, retry_request
from scheduling.profiles import GroupMessage

LIN = Agent(id="lin", name="林溪", aliases=["小溪"], headline="温柔的倾听者", personality_prompt="先照顾别人的情绪")
NAMES = {"lin": "林溪", "zhou": "周衡", "le": "阿乐"}
RECENT = [
    GroupMessage(role="user", seq=1, content="大家好"),
    GroupMessage(role="agent", seq=2, agent_id="zhou", content="你好呀"),
    GroupMessage(role="agent", seq=3, agent_id="lin", content="嗨，今天怎么样？"),
    GroupMessage(role="agent", seq=4, agent_id="le", content="我来讲个笑话"),
]


def _prompt(**kw):
    args = {"language": "zh-CN", "recent": RECENT, "names": NAMES, "user_text": "我今天有点难过"} | kw
    return actor_prompt(PromptTemplates(), LIN, **args)


def test_own_lines_are_assistant_turns_and_the_others_labelled_user_turns():
    messages = _prompt().request.messages
    assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[1].content == "用户：大家好\n周衡：你好呀"
    assert messages[2].content == "嗨，今天怎么样？"  # no own label: nothing to imitate
    assert messages[3].content == "阿乐：我来讲个笑话\n用户：我今天有点难过"  # the message answered last


def test_rules_and_persona_are_in_the_conversation_language_without_scaffolding():
    system = _prompt().request.messages[0].content
    assert system.startswith("你是林溪。你在一个群聊里，和用户还有周衡、阿乐一起聊天。")
    assert "简介：温柔的倾听者" in system and "性格：先照顾别人的情绪" in system and "请只用简体中文回复。" in system
    everything = "\n".join(m.content for m in _prompt().request.messages)
    for phrase in ("Recent group chat", "The user just said", "Speak only as", "Headline", "zh-CN"):
        assert phrase not in everything
    english = _prompt(language="en", user_text="I feel down").request.messages
    assert english[0].content.startswith("You are 林溪. You are in a group chat with the user and 周衡, 阿乐.")
    assert "Always write in en." in english[0].content and english[-1].content.endswith("User: I feel down")


def test_a_direct_chat_has_no_labels():
    recent = [GroupMessage(role="user", seq=1, content="在吗"), GroupMessage(role="agent", seq=2, agent_id="lin", content="在的")]
    messages = _prompt(recent=recent, names={"lin": "林溪"}, direct=True).request.messages
    assert [(m.role, m.content) for m in messages[1:]] == [("user", "在吗"), ("assistant", "在的"), ("user", "我今天有点难过")]
    assert "你在和用户一对一私聊。" in messages[0].content


def test_a_continue_ends_with_a_short_cue_after_the_own_last_line():
    recent = [*RECENT, GroupMessage(role="agent", seq=5, agent_id="lin", content="我觉得")]
    prompt = _prompt(recent=recent, user_text=None)
    messages = prompt.request.messages
    assert messages[-2:][0].role == "assistant" and (messages[-1].role, messages[-1].content) == ("user", "（继续）")
    assert "用户这次没有说话" in messages[0].content and prompt.checks.user_text == ""


def test_a_cross_reply_answers_the_target_last():
    prompt = _prompt(purpose="cross_reply", cross_target=("zhou", "周衡"),
                     this_turn=[("lin", "抱抱你"), ("zhou", "别难过，明天会更好")])
    messages = prompt.request.messages
    assert messages[-2].content == "抱抱你" and messages[-2].role == "assistant"
    assert messages[-1].content == "周衡：别难过，明天会更好"
    assert "另一位伙伴刚刚说完话" in messages[0].content and "现在用一两句话回应周衡刚才说的话。" in messages[0].content
    assert prompt.request.purpose == "cross_reply" and "别难过，明天会更好" in prompt.checks.window


def test_checks_carry_what_a_reply_is_compared_with():
    checks = _prompt().checks
    assert checks.user_text == "我今天有点难过" and checks.window == ("大家好", "你好呀", "嗨，今天怎么样？", "我来讲个笑话")
    assert checks.own_names == ("林溪", "小溪") and checks.other_names == ("周衡", "阿乐")
    assert any("不要替用户或其他成员说话" in s for s in checks.scaffolding) and "温柔的倾听者" in checks.persona
    assert not any("温柔的倾听者" in s for s in checks.scaffolding)  # the persona is checked with a longer run


def test_a_retry_adds_one_short_correction_in_the_language_and_warms_up():
    request = _prompt().request
    retry = retry_request(request, ["echoes_user: 100% the same as the user's message",
                                    "speaks_as_other: a line is labelled '周衡:'"], "zh-CN")
    assert retry.messages[1:] == request.messages[1:] and retry.temperature == 0.9
    correction = retry.messages[0].content.removeprefix(request.messages[0].content)
    assert correction == "\n\n这次换一种说法：别重复用户的原话，用你自己的话回应；只写你自己的一段话，不写别人的台词和名字。"
    english = retry_request(request, ["prompt_leak: quotes 9 tokens"], "en").messages[0].content
    assert english.endswith("\n\nThis time, do it differently: talk only about the chat.")
    script = retry_request(request, ["wrong_script: no Chinese (Han) characters"], "zh-CN").messages[0].content
    assert script == "请只用简体中文回复。\n\n" + request.messages[0].content  # the language first, nothing else


def test_a_retry_after_a_copy_sends_only_the_line_answered():
    prompt = _prompt()
    again = prompt.retry(["repeats_earlier: 95% the same as an earlier message"]).request.messages
    assert [(m.role, m.content) for m in again[1:]] == [("user", "用户：我今天有点难过")]
    assert again[0].content.startswith(prompt.request.messages[0].content) and "别重复群里已经说过的话" in again[0].content
    echo = prompt.retry(["echoes_user: 100%", "speaks_as_other: a line is labelled '周衡:'"]).request
    assert [(m.role, m.content) for m in echo.messages[1:]] == [("user", "用户：我今天有点难过")]
    assert echo.presence_penalty == 1.0  # and the line's own tokens penalised
    labelled = prompt.retry(["speaks_as_other: a line is labelled '周衡:'"]).request
    assert labelled.messages[1:] == prompt.request.messages[1:]  # history kept
    assert prompt.retry(["repeats_earlier"]).checks == prompt.checks  # still checked against the whole window
    cont = _prompt(user_text=None)
    assert cont.retry(["repeats_earlier"]).request.messages[1:] == cont.request.messages[1:]  # a Continue needs it


def test_a_retry_for_a_copy_penalises_the_tokens_of_the_context_and_others_do_not():
    request = _prompt().request
    assert request.presence_penalty is None and request.frequency_penalty is None
    for copied in ("echoes_user: 100% the same as the user's message", "repeats_earlier: 90%"):
        retry = retry_request(request, [copied], "zh-CN")
        assert retry.presence_penalty == retry.frequency_penalty == 1.0
    other = retry_request(request, ["speaks_as_other: a line is labelled '周衡:'"], "zh-CN")
    assert other.presence_penalty is None and other.frequency_penalty is None
