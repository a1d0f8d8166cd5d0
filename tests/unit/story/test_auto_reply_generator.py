"""The generation against a tiny scripted fake joined to the app's one structured path
(``Structured``): every request carries the real wire schema, and the real repair loop runs."""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from app.llm.schema import strict_problems, unbounded
from app.llm.simulator.instances import generate_instance
from app.llm.simulator.language import detect_language
from app.llm.structured import Structured
from story.auto_reply import (
    Anchor,
    AutoReplyConfig,
    AutoReplyDisabled,
    AutoReplyGenerationFailed,
    ContextMessage,
    Guidance,
    SuggestionInput,
    generate_suggestions,
)
from story.auto_reply.generator import MAX_ATTEMPTS
from story.auto_reply.impersonate import COPY_PENALTY
from story.auto_reply.validate import check_options


@dataclass
class FakeUsage:
    input_tokens: int
    output_tokens: int
    estimated: bool = False


@dataclass
class FakeResult:
    text: str
    usage: FakeUsage = field(default_factory=lambda: FakeUsage(100, 20))
    model: str = "fake-model"
    finish_reason: str | None = "stop"


@dataclass
class ScriptedModel(Structured):
    """Answers in order: a list of options (as JSON), raw text, a FakeResult, or an exception.
    ``complete_struct`` comes from the app's one structured path and runs over ``complete``."""

    script: list[Any]
    history: list[Any] = field(default_factory=list)

    async def complete(self, request):
        self.history.append(request)
        reply = self.script.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, list):
            reply = json.dumps({"options": reply}, ensure_ascii=False)
        return reply if isinstance(reply, FakeResult) else FakeResult(reply, FakeUsage(100, 20))

    def prompt(self, n: int = 0) -> str:
        return "\n".join(m.content for m in self.history[n].messages)


GOOD_ZH = ["我翻找随身的手令。", "如果没带手令，我该去哪里补办？", "我先退到旁边等候。"]
GOOD_EN = ["I search my bag for the pass.", "Where can I get a new pass?", "I step aside and wait."]


def make_input(language="zh-CN", context=None, **kw) -> SuggestionInput:
    return SuggestionInput(
        anchor=Anchor(id="m9", content=kw.pop("anchor_text", "守卫伸手索要手令：手令呢？"),
                      agent_name="守卫", agent_description="城门的守卫，严肃但讲理。"),
        language=language,
        latest_user_input=kw.pop("latest", "我想进城。"),
        context=context if context is not None else [ContextMessage("你", "user", "我想进城。", id="m8")],
        **kw,
    )


def config(**kw) -> AutoReplyConfig:
    return AutoReplyConfig(**kw)


async def test_valid_first_answer_is_returned_with_usage():
    model = ScriptedModel([GOOD_ZH])
    result = await generate_suggestions(model, make_input(), config())
    assert result.options == GOOD_ZH and result.fallback is False
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.estimated) == (100, 20, False)
    assert result.usage.total_tokens == 120
    assert [a.problems for a in result.attempts] == [[]] and len(model.history) == 1


async def test_options_are_cleaned_of_list_markers_and_a_code_fence_is_tolerated():
    fenced = "```json\n" + json.dumps({"options": ["1. " + GOOD_ZH[0], *GOOD_ZH[1:]]}, ensure_ascii=False) + "\n```"
    result = await generate_suggestions(ScriptedModel([fenced]), make_input(), config())
    assert result.options == GOOD_ZH and len(result.attempts) == 1


async def test_the_model_receives_the_wire_schema_with_the_count_and_length_bounds():
    model = ScriptedModel([GOOD_ZH])
    await generate_suggestions(model, make_input(), config(suggestion_count=3, max_suggestion_chars=120))
    sent = model.history[0].response_schema
    schema = sent.schema
    assert sent.name == "auto_reply_options"
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == list(schema["properties"]) == ["options"]
    options = schema["properties"]["options"]
    assert options["type"] == "array" and options["minItems"] == options["maxItems"] == 3
    assert options["items"] == {"type": "string", "maxLength": 120}
    assert strict_problems(schema) == [] and unbounded(schema) == []  # strict-mode valid, nothing to loop on


class SchemaFollowing(Structured):
    """Answers what the sent schema allows, as a strict-mode server does (the simulator's instances,
    in the language of the last user message): it never sees a prompt-only rule."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.history: list[Any] = []

    async def complete(self, request):
        self.history.append(request)
        language = detect_language(request.messages[-1].content)
        value = generate_instance(request.response_schema.schema, self.rng, language)
        return FakeResult(json.dumps(value, ensure_ascii=False))


@pytest.mark.parametrize("language, anchor", [("zh-CN", "守卫伸手索要手令：手令呢？"), ("ja-JP", "通行証はどこですか？"), ("ko-KR", "통행증은 어디 있어요?")])
async def test_a_schema_following_model_is_valid_on_the_first_attempt(language, anchor):
    for seed in range(10):
        model = SchemaFollowing(seed)
        count, chars = 2 + seed % 3, 32 + seed * 10
        result = await generate_suggestions(model, make_input(language=language, anchor_text=anchor),
                                            config(suggestion_count=count, max_suggestion_chars=chars))  # fmt: skip
        assert [a.problems for a in result.attempts] == [[]], (seed, result.attempts)
        assert len(result.options) == count and all(len(o) <= chars for o in result.options)


async def test_request_carries_purpose_schema_limits_and_timeout():
    model = ScriptedModel([GOOD_ZH])
    await generate_suggestions(model, make_input(), config(max_tokens=200, timeout_ms=5000, temperature=0.3, model_config_id="small"))
    req = model.history[0]
    assert req.purpose == "auto_reply"
    assert (req.max_tokens, req.timeout_s, req.temperature, req.model_config_id) == (200, 5.0, 0.3, "small")
    assert req.response_schema.schema["required"] == ["options"]
    assert req.response_schema.schema["additionalProperties"] is False
    assert req.response_schema.schema["properties"]["options"]["maxItems"] == 3
    assert "Chinese (zh-CN)" in req.messages[0].content and "守卫" in req.messages[0].content


def is_line(request) -> bool:
    """A line request: plain text (no schema), the chat with the roles swapped."""
    return request.response_schema is None and request.purpose == "auto_reply"


async def test_a_rejected_list_keeps_its_good_options_and_writes_the_missing_one_as_a_line():
    bad = json.dumps({"options": ["Where is it?", *GOOD_ZH[1:]]})
    model = ScriptedModel([bad, GOOD_ZH[0]])
    result = await generate_suggestions(model, make_input(), config())
    assert result.options == [*GOOD_ZH[1:], GOOD_ZH[0]]
    assert result.attempts[0].problems == ["option 1: wrong script for language zh-CN (no Chinese (Han) characters)"]
    assert result.attempts[1].problems == [] and len(result.attempts) == 2
    line = model.history[1]
    assert is_line(line) and "Where is it?" not in model.prompt(1)  # the rejected answer is not resent
    roles = [(m.role, m.content) for m in line.messages]
    assert roles[0][0] == "system" and "普通人" in roles[0][1] and "守卫" in roles[0][1]
    assert roles[1] == ("assistant", "我想进城。")  # the user's own line is the model's turn
    assert roles[2][0] == "user" and roles[2][1].startswith("守卫伸手索要手令：手令呢？")
    assert roles[2][1].endswith("（这次说点别的，换个话题）")  # the third option's direction
    assert result.usage.input_tokens == 200 and result.usage.output_tokens == 40


async def test_each_missing_option_gets_its_own_direction_in_the_chat_language():
    alike = ["我想先去城门看看。", "我想先去城门看一看。", "我想先去城门看看吧。"]
    model = ScriptedModel([alike, "手令在哪里可以补办？", "今天的城门怎么这么热闹？"])
    result = await generate_suggestions(model, make_input(), config())
    assert result.options == [alike[0], "手令在哪里可以补办？", "今天的城门怎么这么热闹？"]
    assert "near-duplicate of option 1" in result.attempts[0].problems[0] and result.attempts[1].problems == []
    assert model.history[1].messages[-1].content.endswith("（这次用一个问题回复）")
    assert model.history[2].messages[-1].content.endswith("（这次说点别的，换个话题）")
    en = ScriptedModel([json.dumps({"options": ["Fine.", "Fine!", "Fine?"]}), "Where can I get one?", "Nice weather today."])
    await generate_suggestions(en, make_input(language="en", anchor_text="Where is your pass?"), config())
    assert en.history[1].messages[-1].content.endswith("(This time, answer with a question.)")
    assert "English" in en.history[1].messages[0].content


async def test_lines_are_written_in_the_chat_language_when_no_option_of_the_list_is_usable():
    bad = json.dumps({"options": ["Where is it?", "I wait.", "Fine."]})
    model = ScriptedModel([bad, "通行証を探す。", "どこで再発行できますか？", "少し待ちます。"])
    result = await generate_suggestions(model, make_input(language="ja-JP"), config())
    assert result.options == ["通行証を探す。", "どこで再発行できますか？", "少し待ちます。"] and len(result.attempts) == 2
    assert all(is_line(r) and "Japanese (ja-JP)" in r.messages[0].content for r in model.history[1:])


async def test_lines_are_asked_with_the_context_penalised_and_a_copy_is_asked_again():
    model = ScriptedModel([GOOD_ZH[:2], "守卫伸手索要手令：手令呢？", GOOD_ZH[2]])
    result = await generate_suggestions(model, make_input(), config())
    assert result.options == GOOD_ZH and len(result.attempts) == 3
    assert result.attempts[0].problems == ["expected exactly 3 options, got 2"]
    assert any("option 3: copies the character's message" in p for p in result.attempts[1].problems)
    assert all(r.presence_penalty == r.frequency_penalty == COPY_PENALTY for r in model.history[1:])
    assert model.history[0].presence_penalty is None  # the list call is the spec's, as it was


async def test_the_last_round_of_lines_asks_spares_and_keeps_the_first_that_pass():
    bad = json.dumps({"options": ["Where is it?", "I wait.", "Fine."]})
    copy = "守卫伸手索要手令：手令呢？"
    # round 1: option 1 passes, 2 and 3 copy the guard; round 2 (the last): 2 and 3 again, then spares
    model = ScriptedModel([bad, GOOD_ZH[0], copy, copy, copy, GOOD_ZH[1], copy, GOOD_ZH[2], "不会用到。", "也不会。"])
    result = await generate_suggestions(model, make_input(), config())
    assert result.options == [GOOD_ZH[0], GOOD_ZH[1], GOOD_ZH[2]] and len(result.attempts) == 3
    last = [r.messages[-1].content for r in model.history[4:]]
    assert len(last) == 6 and last[0].endswith("（这次用一个问题回复）") and last[1].endswith("（这次说点别的，换个话题）")
    assert not last[2].endswith("）")  # the first spare: the natural direction (the first option's)
    assert [line[line.rindex("（"):] for line in last[3:]] == ["（这次说说你自己的感受）", "（这次说说你接下来打算做什么）",
                                                            "（这次只简短地回应一句）"]  # fmt: skip
    # the two copies refused, each as the option it would have been; the spares not needed are not checked
    assert {p.split(":")[0] for p in result.attempts[2].problems} == {"option 2", "option 3"}


async def test_lines_are_taken_as_they_come_and_the_calls_still_running_are_stopped():
    """A line stuck on a busy server no longer holds the others back or costs the round: the
    options fill from the answers that arrive, and the call still running is cancelled."""
    cancelled: list[bool] = []

    class OneStuck(ScriptedModel):
        async def complete(self, request):
            if len(self.history) == 2:  # the last round's first line never answers
                self.history.append(request)
                try:
                    await asyncio.sleep(3600)
                except asyncio.CancelledError:
                    cancelled.append(True)
                    raise
            return await super().complete(request)

    bad = json.dumps({"options": ["Where is it?", GOOD_ZH[1], GOOD_ZH[2]]})
    # the list keeps two, round 1's line copies the guard, round 2: one stuck line, then a good spare
    model = OneStuck([bad, "守卫伸手索要手令：手令呢？", GOOD_ZH[0], *["不会用到。"] * 5])
    result = await asyncio.wait_for(generate_suggestions(model, make_input(), config(timeout_ms=1000)), 5)
    assert result.options == [GOOD_ZH[1], GOOD_ZH[2], GOOD_ZH[0]] and cancelled == [True]
    assert len(result.attempts) == 3 and result.attempts[2].problems == []


def test_a_list_option_stopped_by_the_length_bound_keeps_its_whole_sentences():
    from story.auto_reply.lines import at_limit, cut_problems

    stopped = ("I feel a bit better now, thanks. What about you, did anything good happen today? Tell me about it, "
               "I want to hear the whole story from the start. And then")  # fmt: skip
    assert at_limit(stopped, len(stopped)).endswith("from the start.")
    assert at_limit("Short one", 160) == "Short one"
    assert cut_problems("x" * 160, 160) == ["was cut off mid-sentence at the length limit (160 chars)"]
    assert cut_problems("我" * 159 + "。", 160) == [] and cut_problems("Fine, and you", 160) == []


async def test_three_failures_raise_the_error_with_problems_per_attempt_and_no_options():
    # the list, one line, then the last round: the line and five spares (the other directions)
    model = ScriptedModel([[*GOOD_ZH[:2], GOOD_ZH[0]], "我" * 170, *["我想进城。"] * 6])
    with pytest.raises(AutoReplyGenerationFailed) as info:
        await generate_suggestions(model, make_input(), config())
    err = info.value
    assert err.code == "auto_reply_generation_failed" and err.attempts == 3
    assert err.problems_per_attempt[0][0].startswith("option 3: duplicate of option 1")
    assert "option 3: over length (170 > 160 chars)" in err.problems_per_attempt[1]
    assert "option 3: copies one of the user's earlier messages (write something new)" in err.problems_per_attempt[2]
    assert err.problems_per_attempt[2].count("option 3: copies one of the user's earlier messages (write something new)") == 6
    assert not hasattr(err, "options") and err.usage.input_tokens == 800
    assert MAX_ATTEMPTS == 3 and len(model.history) == 8


async def test_answers_that_break_the_schema_are_rejected_and_named():
    for bad, named in (('{"options": ["我等等"], "extra": 1}', "the JSON does not match the schema"),
                       ('["我等等", "你说吧", "好的"]', "the JSON does not match the schema"),
                       ("sure! here you go", "the reply is not valid JSON")):
        model = ScriptedModel([bad, *GOOD_ZH])
        result = await generate_suggestions(model, make_input(), config())
        assert result.attempts[0].problems[0].startswith(named) and result.options == GOOD_ZH


async def test_model_errors_and_timeouts_count_as_failed_attempts():
    class SlowFirst(ScriptedModel):
        """A host that enforces the request's ``timeout_s`` on each call, as the gateway does."""

        async def complete(self, request):
            if not self.history:
                self.history.append(request)
                async with asyncio.timeout(request.timeout_s):
                    await asyncio.sleep(5)
            return await super().complete(request)

    model = ScriptedModel([RuntimeError("upstream 500"), *GOOD_ZH])
    result = await generate_suggestions(model, make_input(), config())
    assert result.attempts[0].problems == ["model call failed: RuntimeError: upstream 500"]
    assert result.attempts[1].problems == [] and result.options == GOOD_ZH
    assert all(is_line(r) for r in model.history[1:])
    result = await generate_suggestions(SlowFirst([*GOOD_ZH]), make_input(), config(timeout_ms=1000))
    assert result.attempts[0].problems == ["model call timed out after 1000 ms"]
    assert result.options == GOOD_ZH


async def test_a_model_error_after_a_rejected_answer_keeps_the_three_attempt_budget():
    bad = json.dumps({"options": GOOD_ZH[:2]}, ensure_ascii=False)
    down = RuntimeError("upstream 500")
    model = ScriptedModel([bad, down, *[down] * 6, GOOD_ZH[2]])  # the last round: the line and five spares
    with pytest.raises(AutoReplyGenerationFailed) as info:
        await generate_suggestions(model, make_input(), config())
    assert len(model.history) == 8 and info.value.attempts == 3
    assert info.value.problems_per_attempt == [
        ["expected exactly 3 options, got 2"],
        ["option 3: model call failed: RuntimeError: upstream 500"],
        ["option 3: model call failed: RuntimeError: upstream 500"] * 6,
    ]


async def test_a_host_that_never_answers_is_cut_at_the_generations_time_budget():
    class Silent(ScriptedModel):
        """Ignores the request's ``timeout_s``: the generator's own bound must hold."""

        async def complete(self, request):
            self.history.append(request)
            await asyncio.sleep(60)

    model = Silent([])
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(AutoReplyGenerationFailed) as info:
        await generate_suggestions(model, make_input(), config(timeout_ms=1000))
    assert loop.time() - started < MAX_ATTEMPTS * 1.0 + 1.0
    assert info.value.attempts == 1 and len(model.history) == 1
    assert "no answer within the generation's budget (3 × 1000 ms)" in info.value.problems_per_attempt[0][0]


async def test_conservative_fallback_only_when_configured_and_flagged():
    failing = lambda: ScriptedModel([["a", "b", "c"]] * 3)
    with pytest.raises(AutoReplyGenerationFailed):
        await generate_suggestions(failing(), make_input(), config())
    result = await generate_suggestions(failing(), make_input(), config(fallback="conservative"))
    assert result.fallback is True and len(result.options) == 3 and len(result.attempts) == 3
    assert "手令呢" in result.options[1]
    assert check_options(result.options, count=3, max_chars=160, language="zh-CN",
                         speaker_names=["守卫"], anchor_text="守卫伸手索要手令：手令呢？").ok


async def test_prompt_never_contains_text_after_the_anchor_and_keeps_at_most_the_window():
    ctx = [ContextMessage(f"S{i}", "user" if i % 2 else "agent", f"before-{i}", id=f"b{i}") for i in range(10)]
    ctx += [ContextMessage("x", "user", "   "),  # empty: skipped, does not use a slot
            ContextMessage("守卫", "agent", "ANCHOR-COPY", id="m9"),
            ContextMessage("你", "user", "AFTER-THE-ANCHOR", id="m10")]
    model = ScriptedModel([GOOD_ZH])
    await generate_suggestions(model, make_input(context=ctx), config(context_message_count=4))
    prompt = model.prompt()
    assert "AFTER-THE-ANCHOR" not in prompt and "ANCHOR-COPY" not in prompt
    assert [f"before-{i}" in prompt for i in range(10)] == [False] * 6 + [True] * 4
    assert "守卫伸手索要手令：手令呢？" in prompt  # the saved anchor text given as input


async def test_story_stage_is_marked_as_not_yet_happened_and_guidance_is_shown():
    inp = make_input(pending_stage="守卫会放行", guidance=Guidance(emotion={"label": "anxious"}, intent="enter the city"))
    model = ScriptedModel([GOOD_ZH])
    await generate_suggestions(model, inp, config())
    prompt = model.prompt()
    head, _, rest = prompt.partition("守卫会放行")
    assert "NOT YET HAPPENED" in head[-300:] and "</not_yet_happened>" in rest
    assert '{"label":"anxious"}' in prompt and "enter the city" in prompt


async def test_cancellation_propagates_into_the_model_call():
    seen: list[str] = []
    started = asyncio.Event()

    class Hanging(ScriptedModel):
        async def complete(self, request):
            started.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                seen.append("cancelled")
                raise

    task = asyncio.create_task(generate_suggestions(Hanging([]), make_input(), config()))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == ["cancelled"]


async def test_usage_estimated_by_the_host_stays_marked_estimated_and_is_summed():
    """A provider without usage is estimated by the host (``app.llm.usage``); the library keeps the flag."""
    bad = json.dumps({"options": GOOD_EN[:2]})
    model = ScriptedModel([FakeResult(bad, FakeUsage(30, 12)), FakeResult(GOOD_EN[2], FakeUsage(50, 15, estimated=True))])
    result = await generate_suggestions(model, make_input(language="en", anchor_text="Where is your pass?"), config())
    assert result.usage.estimated is True
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.total_tokens) == (80, 27, 107)


async def test_cut_off_output_names_the_token_limit_and_is_never_resent():
    model = ScriptedModel([FakeResult('{"options": ["我翻找', FakeUsage(10, 384), finish_reason="length"), *GOOD_ZH])
    result = await generate_suggestions(model, make_input(), config())
    assert "output was cut off at maxTokens (384)" in result.attempts[0].problems
    assert result.options == GOOD_ZH  # nothing of the cut answer is kept
    for request in model.history[1:]:
        assert not any('{"options": ["我翻找' in m.content for m in request.messages)


async def test_disabled_config_makes_no_model_call():
    model = ScriptedModel([GOOD_ZH])
    with pytest.raises(AutoReplyDisabled):
        await generate_suggestions(model, make_input(), config(enabled=False))
    assert model.history == []


async def test_suggestion_count_and_length_limits_come_from_the_config():
    model = ScriptedModel([["我等等", "你说吧"], ["我等等", "继续说吧"]])
    result = await generate_suggestions(model, make_input(), config(suggestion_count=2, max_suggestion_chars=32))
    assert result.options == ["我等等", "你说吧"]
    assert "写2条" in model.prompt() and "不超过32个字" in model.prompt()  # a Chinese chat: the task in Chinese
    options = model.history[0].response_schema.schema["properties"]["options"]
    assert (options["minItems"], options["maxItems"], options["items"]["maxLength"]) == (2, 2, 32)
