"""Write for me: one line in the user's voice, streamed, checked, retried with what was wrong."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from story.auto_reply import AutoReplyConfig, AutoReplyDisabled, ContextMessage, InvalidSuggestionInput
from story.auto_reply.impersonate import (
    COPY_PENALTY, ImpersonateFailed, ImpersonateInput, check_line, clean, impersonate, with_draft,
)  # fmt: skip

CONFIG = AutoReplyConfig()
ZH = ImpersonateInput(
    language="zh-CN", members=["林溪", "周衡"],
    context=[ContextMessage("User", "user", "我今天有点累"), ContextMessage("林溪", "agent", "辛苦啦，要不要先休息一下？")],
)  # fmt: skip
EN = ImpersonateInput(
    language="en", members=["Mia"],
    context=[ContextMessage("User", "user", "I finally finished the report"), ContextMessage("Mia", "agent", "Well done! How do you feel?")],
)  # fmt: skip


class Result(msgspec.Struct):
    text: str
    model: str = "fake"
    finish_reason: str | None = "stop"
    usage: Any = None


class Streamer:
    """Answers each call with the next text, streamed in two pieces; records the requests."""

    def __init__(self, *answers: str | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[Any] = []

    async def stream(self, request: Any, on_delta: Any) -> Result:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        half = len(answer) // 2
        for piece in (answer[:half], answer[half:]):
            if piece:
                await on_delta(piece)
        return Result(answer)


async def test_a_good_line_streams_and_is_returned_whole() -> None:
    deltas: list[tuple[int, str]] = []

    async def on_delta(n: int, piece: str) -> None:
        deltas.append((n, piece))

    model = Streamer("好呀，那我先去泡杯茶")
    result = await impersonate(model, ZH, CONFIG, on_delta=on_delta)
    assert result.text == "好呀，那我先去泡杯茶"
    assert result.attempts == [[]]
    assert "".join(p for _, p in deltas) == "好呀，那我先去泡杯茶" and {n for n, _ in deltas} == {1}
    request = model.requests[0]
    assert request.purpose == "auto_reply.impersonate" and request.presence_penalty is None
    prompt = "\n".join(m.content for m in request.messages)
    assert "林溪" in prompt and "辛苦啦" in prompt and "我今天有点累" in prompt


async def test_an_echo_of_the_user_is_discarded_and_retried_with_penalties() -> None:
    discarded: list[tuple[int, list[str]]] = []

    async def on_discard(n: int, problems: list[str]) -> None:
        discarded.append((n, problems))

    model = Streamer("我今天有点累", "嗯，休息一下也好，你陪我聊聊天吧")
    result = await impersonate(model, ZH, CONFIG, on_discard=on_discard)
    assert result.text == "嗯，休息一下也好，你陪我聊聊天吧"
    assert discarded == [(1, ["copies one of the user's earlier messages (write something new)"])]
    retry = model.requests[1]
    assert retry.presence_penalty == COPY_PENALTY == retry.frequency_penalty
    assert retry.messages[-1].role == "user" and "这条不能用" in retry.messages[-1].content


async def test_the_companions_words_given_back_are_retried_with_penalties() -> None:
    model = Streamer("Well done! How do you feel? I feel", "Relieved, honestly. I might sleep all weekend")
    result = await impersonate(model, EN, CONFIG)
    assert result.text == "Relieved, honestly. I might sleep all weekend"
    assert any("re-says" in p for p in result.attempts[0])
    assert model.requests[0].presence_penalty is None
    assert model.requests[1].presence_penalty == COPY_PENALTY == model.requests[1].frequency_penalty


async def test_a_line_for_a_member_or_in_the_wrong_language_is_never_returned() -> None:
    model = Streamer("林溪: 我也累了", "Sure, let me rest", "好的。周衡：我陪你")
    with pytest.raises(ImpersonateFailed) as failed:
        await impersonate(model, ZH, CONFIG)
    problems = failed.value.attempts
    assert len(problems) == 3
    assert any('spoken by "林溪"' in p for p in problems[0])
    assert any("wrong script" in p for p in problems[1])
    assert problems[2] == ['writes a line for "周衡" (write only the user\'s own message)']


async def test_a_model_error_is_one_failed_attempt_and_cancellation_propagates() -> None:
    model = Streamer(RuntimeError("boom"), "Thanks Mia, I feel relieved")
    result = await impersonate(model, EN, CONFIG)
    assert result.attempts == [["model call failed: RuntimeError: boom"], []]

    class Hangs:
        async def stream(self, request: Any, on_delta: Any) -> Any:
            await asyncio.sleep(60)

    task = asyncio.ensure_future(impersonate(Hangs(), EN, CONFIG))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_draft_is_kept_verbatim_at_the_start() -> None:
    draft = msgspec.structs.replace(EN, draft="Honestly I")
    model = Streamer("feel great, thanks for asking")
    result = await impersonate(model, draft, CONFIG)
    assert result.text == "Honestly I feel great, thanks for asking"
    assert '(Start your reply with "Honestly I")' in model.requests[0].messages[-1].content
    assert with_draft("我想", "我想去海边走走") == "我想去海边走走"
    assert with_draft("我想", "去海边走走") == "我想去海边走走"
    assert with_draft("Honestly", "Sure. Honestly, yes") == "Honestly, yes"
    assert with_draft("Well", ", maybe") == "Well, maybe"
    assert with_draft("其实我", "我感觉压力很大") == "其实我感觉压力很大"  # no stutter where the model starts over
    assert with_draft("Honestly I", "i feel fine") == "Honestly I feel fine"
    assert with_draft("I think", "thinking of you") == "I think thinking of you"  # whole words only


def test_labels_and_wrapping_quotes_are_cleaned_but_inner_quotes_stay() -> None:
    assert clean("User: hi there") == "hi there"
    assert clean("嗯，我先休息一下\n\n林溪: 好的，晚安") == "嗯，我先休息一下"  # the user's line, not the chat after it
    assert clean("用户：“我们走吧”") == "我们走吧"
    assert clean('I said "no" twice') == 'I said "no" twice'


def test_an_assistants_refusal_or_a_label_after_the_draft_is_not_the_users_line() -> None:
    assert check_line("I'm really sorry, but I can't assist with that.", EN, CONFIG)[1] == [
        "is an assistant's refusal or disclaimer, not something the user would say"]
    assert check_line("作为一个AI，我无法回答", ZH, CONFIG)[1][-1].startswith("is an assistant's refusal")
    for helper in ("I'm here to help.", "How can I help you today?", "有什么可以帮你的吗？",
                   "当然可以，请提供更多的信息和想法，我会根据你的需求给出建议。", "当然可以，请告诉我你想要的缓解压力的方法。",
                   "当然可以帮你解决这个问题。你可以尝试和室友聊聊。", "通过运动可以缓解压力，所以我很高兴能够帮助你。",
                   "很抱歉，我不太明白你的意思。如果你有其他问题或需要帮助，请告诉我。"):  # Qwen-0.5B, as "the user"
        assert check_line(helper, EN if helper.isascii() else ZH, CONFIG)[1][-1].startswith("is an assistant's"), helper
    assert check_line("I'm here for the party, not the speeches", EN, CONFIG)[1] == []
    line, problems = check_line("林溪: 温柔的倾听者", msgspec.structs.replace(ZH, draft="其实我"), CONFIG)
    assert line == "其实我林溪: 温柔的倾听者" and problems == ['writes a line for "林溪" (write only the user\'s own message)']


def test_the_model_plays_the_user_with_the_roles_swapped() -> None:
    from story.auto_reply.impersonate import build_messages

    messages = build_messages(msgspec.structs.replace(ZH, draft="我想"), CONFIG)
    assert [m.role for m in messages] == ["system", "assistant", "user"]
    assert messages[1].content == "我今天有点累"
    assert messages[2].content.startswith("林溪: 辛苦啦") and "「我想」" in messages[2].content
    assert "你接着说" in build_messages(msgspec.structs.replace(ZH, context=ZH.context[:1]), CONFIG)[-1].content
    assert build_messages(EN, CONFIG)[-1].content == "Well done! How do you feel?"  # one companion: no name label


def test_giving_the_companions_sentence_back_is_not_an_answer() -> None:
    from story.auto_reply.impersonate import resays

    asked = "别担心，紧张说明你很在乎这次机会。要不要先深呼吸几次，跟我说说你最担心哪一部分？"
    assert resays("其实我应该先深呼吸几次，跟我说说你最担心哪一部分？", asked)
    assert resays("当然，可以。深呼吸几次，我会先问你最担心哪一部分。", asked)
    assert not resays("其实我最担心的是这次机会。", asked)
    assert not resays("The interview environment is stressful.", "That sounds stressful. What part of the interview worries you?")


def test_a_line_that_only_repeats_the_draft_adds_nothing() -> None:
    _, problems = check_line("Honestly I", msgspec.structs.replace(EN, draft="Honestly I"), CONFIG)
    assert problems == ["adds nothing to what the user already typed"]


async def test_disabled_and_bad_drafts_are_input_errors() -> None:
    with pytest.raises(AutoReplyDisabled):
        await impersonate(Streamer(), EN, msgspec.structs.replace(CONFIG, enabled=False))
    with pytest.raises(InvalidSuggestionInput):
        await impersonate(Streamer(), msgspec.structs.replace(EN, draft="x" * 161), CONFIG)


def test_a_long_line_keeps_its_whole_first_sentences_that_fit() -> None:
    from story.auto_reply.impersonate import fit

    long = "I'm nervous. I keep thinking about the questions. " + "And then " * 20 + "more."
    assert fit(long, 60) == "I'm nervous. I keep thinking about the questions."
    assert fit("其实我很紧张。我一直在想面试官会问什么问题，越想越睡不着，" + "真的" * 40, 40) == "其实我很紧张。"
    assert fit("x" * 200, 160) == "x" * 200  # no sentence end within the limit: left to the length check
    assert fit("Ok. " + "y" * 200, 160, keep=0) == "Ok. " + "y" * 200  # too little would be left
    assert fit("Hello there.", 160) == "Hello there."


def test_a_line_that_loops_ends_where_a_sentence_comes_again() -> None:
    # Qwen2.5-0.5B in CI: the same sentence until maxTokens; what came before the loop is the line
    loop = "我会尽量找一个安静的环境。" * 3 + "我会尽量"
    assert check_line(loop, ZH, CONFIG, cut_off=True) == ("我会尽量找一个安静的环境。", [])
    assert check_line("I'm so nervous. Really nervous. I'm so nervous. I'm so", EN, CONFIG)[0] == "I'm so nervous. Really nervous."
    # a loop inside one sentence has nothing before it to keep: still rejected
    clause = "我会尽量找一个安静的地方，我会尽量找一个安静的地方，"
    assert "says the same sentence more than once" in check_line(clause, ZH, CONFIG)[1]
    draft = msgspec.structs.replace(ZH, draft="其实我")  # the typed start stays
    assert check_line("会尽量找一个安静的环境。其实我会尽量找一个安静的环境。", draft, CONFIG) == ("其实我会尽量找一个安静的环境。", [])
    assert check_line("好呀好呀，我们走吧", ZH, CONFIG)[1] == []
    assert check_line("哈哈。哈哈。笑死我了", ZH, CONFIG)[0] == "哈哈。哈哈。笑死我了"  # too short to be a loop


def test_a_cut_off_line_keeps_its_whole_sentences() -> None:
    assert check_line("我也很紧张。我一直在想面试官会", ZH, CONFIG, cut_off=True) == ("我也很紧张。", [])
    assert check_line("我也很紧张。我一直在想面试官会", ZH, CONFIG)[0] == "我也很紧张。我一直在想面试官会"  # it stopped there
    assert check_line("I keep thinking about", EN, CONFIG, cut_off=True)[0] == "I keep thinking about"  # nothing whole to keep


async def test_a_cut_off_answer_is_returned_without_its_unfinished_end() -> None:
    class CutOff(Streamer):
        async def stream(self, request: Any, on_delta: Any) -> Result:
            result = await super().stream(request, on_delta)
            return msgspec.structs.replace(result, finish_reason="length")

    result = await impersonate(CutOff("今天真的好累啊。我想先睡一会儿，明天再"), ZH, CONFIG)
    assert result.text == "今天真的好累啊。" and result.attempts == [[]]


def test_an_earlier_message_said_again_or_a_piece_of_json_is_not_the_users_line() -> None:
    chat = msgspec.structs.replace(ZH, context=[
        ContextMessage("周衡", "agent", "我建议你找一个专业的心理咨询师来处理这个问题。"), *ZH.context])
    assert "re-says an earlier message of the chat (write something new)" in check_line(
        "我建议你找一个专业的心理咨询师来处理这个问题吧", chat, CONFIG)[1]
    assert check_line("我今天真的有点累，想早点睡", chat, CONFIG)[1] == []  # takes up a word of the user's line: fine
    assert "is a piece of JSON, not a message" in check_line('options": [', EN, CONFIG)[1]
    assert "is a piece of JSON, not a message" in check_line('{"options": ["I wait."]}', EN, CONFIG)[1]
    assert clean("我 (周衡)：我也想去") == "我也想去"  # a user label with a name in brackets


# Seen on Qwen2.5-Coder-0.5B (suggestion probe over a group chat): lines stitched from the chat.
STITCHED = ImpersonateInput(
    language="en", members=["Lia", "Joy"],
    context=[ContextMessage("User", "user", "I feel really down today and I don't know why."),
             ContextMessage("Lia", "agent", "I'm here with you. Do you want to tell me what today was like?"),
             ContextMessage("User", "user", "I just got promoted, I'm so happy!"),
             ContextMessage("Joy", "agent", "No way! Congrats! This calls for cake and a tiny victory dance!")],
)  # fmt: skip


def test_a_line_pieced_together_from_earlier_messages_is_not_the_users_own() -> None:
    from story.auto_reply.copies import holds_whole, pieced_together

    pieced = "is pieced together from earlier messages of the chat (write something new)"
    # two of the user's own lines, each under half of it
    assert check_line("I'm feeling really down today and I don't know why. I just got promoted, I'm so happy!",
                      STITCHED, CONFIG)[1] == [pieced]  # fmt: skip
    # an earlier message whole, with a question after it
    assert check_line("I feel really down today and I don't know why. What about you, do you ever feel like that after a long and busy week?",
                      STITCHED, CONFIG)[1] == [pieced]  # fmt: skip
    zh = ImpersonateInput(language="zh-CN", members=["阿乐"], context=[
        ContextMessage("我", "user", "我升职了！太开心了！"),
        ContextMessage("阿乐", "agent", "哇哦！恭喜恭喜！今晚必须加个鸡腿庆祝一下！新职位听起来很厉害嘛！")])  # fmt: skip
    assert check_line("我升职了！太开心了！今晚我们去吃火锅吧，你们也来！", zh, CONFIG)[1] == [pieced]
    # answers that take up a word or two stay the user's own
    assert check_line("Thanks! I'm going to celebrate with my sister tonight.", STITCHED, CONFIG)[1] == []
    assert check_line("哈哈谢谢！鸡腿必须有，我请客！", zh, CONFIG)[1] == []
    assert not holds_whole("好的，我明天再说。", ["好的"])  # a short phrase anyone says again
    assert not pieced_together("", ["anything"])


def test_an_assistants_closing_lines_are_not_the_users() -> None:
    line = "好的，请保持冷静和专注！我会尽力给你一些帮助和建议。如果你有任何问题，请随时告诉我！"
    assert "is an assistant's refusal or disclaimer, not something the user would say" in check_line(line, ZH, CONFIG)[1]
    en = "Great job! If you have any other questions, feel free to ask."
    assert "is an assistant's refusal or disclaimer, not something the user would say" in check_line(en, EN, CONFIG)[1]
    assert check_line("Let me know what you think of my plan!", EN, CONFIG)[1] == []


def test_a_line_in_the_companions_voice_is_refused() -> None:
    """Options Qwen2.5-0.5B gave for the user after a real group chat's advice."""
    assistant = "is an assistant's refusal or disclaimer, not something the user would say"
    for line in ("很荣幸能够帮助到你！希望你的视频更加精彩。", "感谢您的耐心和理解。我会尽我所能去帮助您处理这种情况。",
                 "我最近感到非常疲惫和无力了。希望这能帮到你！", "很抱歉给您带来的不便，请您稍后再试一下。",
                 "多听音乐会好一些。希望这些建议对你有所帮助！", "我理解你的需求。但是，我不会提供具体的薪资信息。"):  # fmt: skip
        assert assistant in check_line(line, ZH, CONFIG)[1], line
    assert assistant in check_line("Sure, that's the plan. Hope this helps!", EN, CONFIG)[1]
    advising = "advises the companion in its own voice (the user asks, answers or tells)"
    assert advising in check_line("我建议你在一家大型超市寻找工作，薪资比较高。", ZH, CONFIG)[1]
    assert advising in check_line("I suggest you take the job closer to home.", EN, CONFIG)[1]
    assert check_line("你建议我先还哪一张卡？", ZH, CONFIG)[1] == []  # asking for advice is the user's own
    assert "ends with a colon, a list's heading rather than a message" in check_line("好的，有几点可以尝试：", ZH, CONFIG)[1]


def test_the_hint_carries_the_reading_not_its_reasons_and_lines_see_the_gist() -> None:
    from story.auto_reply import Guidance
    from story.auto_reply.impersonate import build_messages
    from story.auto_reply.lines import gist

    reading = Guidance(emotion={"primaryEmotion": "sad", "intensity": 0.7, "reason": "优先选择善于共情的 Agent"},
                       intent={"kind": "seek_comfort", "reason": "the user is sad"})  # fmt: skip
    system = build_messages(msgspec.structs.replace(ZH, guidance=reading), CONFIG)[0].content
    assert '{"emotion":"sad","intent":"seek_comfort"}' in system and "Agent" not in system and "reason" not in system
    advice = "首先，你需要确定你的收入来源。你可以查看你的财务报表。\n\n其次，你需要确定你的地理位置。"
    assert gist(advice) == "首先，你需要确定你的收入来源。你可以查看你的财务报表。"
    assert gist("I understand how you feel. " + "Here is a long plan with many steps. " * 4) == (
        "I understand how you feel. Here is a long plan with many steps.")  # whole sentences up to 80 characters
