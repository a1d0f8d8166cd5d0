"""The generation loop against a tiny scripted fake model: repair, failure, fallback, anchoring."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import pytest

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
from story.auto_reply.validate import check_options


@dataclass
class FakeUsage:
    input_tokens: int
    output_tokens: int
    estimated: bool = False


@dataclass
class FakeResult:
    text: str
    usage: FakeUsage | None = None
    model: str = "fake-model"
    finish_reason: str | None = "stop"


@dataclass
class ScriptedModel:
    """Answers in order: a list of options (as JSON), raw text, a FakeResult, or an exception."""

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


async def test_valid_first_answer_is_returned_with_usage_and_model():
    model = ScriptedModel([GOOD_ZH])
    result = await generate_suggestions(model, make_input(), config())
    assert result.options == GOOD_ZH
    assert result.fallback is False and result.model == "fake-model"
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.estimated) == (100, 20, False)
    assert [a.problems for a in result.attempts] == [[]]


async def test_request_carries_purpose_schema_limits_and_timeout():
    model = ScriptedModel([GOOD_ZH])
    await generate_suggestions(model, make_input(), config(max_tokens=200, timeout_ms=5000, temperature=0.3, model_config_id="small"))
    req = model.history[0]
    assert req.purpose == "auto_reply"
    assert (req.max_tokens, req.timeout_s, req.temperature, req.model_config_id) == (200, 5.0, 0.3, "small")
    assert req.response_schema.schema["required"] == ["options"]
    assert req.response_schema.schema["additionalProperties"] is False
    assert "Chinese (zh-CN)" in req.messages[0].content and "守卫" in req.messages[0].content


async def test_invalid_answer_is_repaired_on_attempt_two_with_previous_output_and_problems():
    bad = json.dumps({"options": ["Where is it?", *GOOD_ZH[1:]]})
    model = ScriptedModel([bad, GOOD_ZH])
    result = await generate_suggestions(model, make_input(), config())
    assert result.options == GOOD_ZH
    assert [len(a.problems) for a in result.attempts] == [1, 0]
    repair = model.history[1].messages
    assert repair[-2].role == "assistant" and repair[-2].content == bad
    assert "option 1: wrong script for language zh-CN (no Chinese (Han) characters)" in repair[-1].content
    assert result.usage.input_tokens == 200 and result.usage.output_tokens == 40


async def test_repair_on_attempt_three_sends_only_the_latest_rejected_output():
    model = ScriptedModel([GOOD_ZH[:2], ["守卫：站住", *GOOD_ZH[1:]], GOOD_ZH])
    result = await generate_suggestions(model, make_input(), config())
    assert result.options == GOOD_ZH and len(result.attempts) == 3
    third = model.history[2].messages
    assert "守卫：站住" in third[-2].content
    assert 'option 1: written as a line spoken by "守卫"' in third[-1].content
    assert "expected exactly 3 options, got 2" not in third[-1].content


async def test_three_failures_raise_the_error_with_problems_per_attempt_and_no_options():
    long = "我" * 170
    model = ScriptedModel([[*GOOD_ZH[:2], GOOD_ZH[0]], [long, *GOOD_ZH[1:]], "not json"])
    with pytest.raises(AutoReplyGenerationFailed) as info:
        await generate_suggestions(model, make_input(), config())
    err = info.value
    assert err.code == "auto_reply_generation_failed" and err.attempts == 3
    assert err.problems_per_attempt[0][0].startswith("option 3: duplicate of option 1")
    assert err.problems_per_attempt[1] == ["option 1: over length (170 > 160 chars)"]
    assert err.problems_per_attempt[2][0].startswith("output is not valid JSON")
    assert not hasattr(err, "options") and err.usage.input_tokens == 300


async def test_model_errors_and_timeouts_count_as_failed_attempts():
    class SlowFirst(ScriptedModel):
        async def complete(self, request):
            if not self.history:
                self.history.append(request)
                await asyncio.sleep(5)
            return await super().complete(request)

    model = ScriptedModel([RuntimeError("upstream 500"), GOOD_ZH])
    result = await generate_suggestions(model, make_input(), config())
    assert result.attempts[0].problems == ["model call failed: RuntimeError: upstream 500"]
    assert model.history[1].messages == model.history[0].messages  # nothing to repair
    result = await generate_suggestions(SlowFirst([GOOD_ZH]), make_input(), config(timeout_ms=1000))
    assert result.attempts[0].problems == ["model call timed out after 1000 ms"]
    assert result.options == GOOD_ZH


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


async def test_missing_provider_usage_is_estimated_from_the_text():
    text = json.dumps({"options": GOOD_EN})
    model = ScriptedModel([FakeResult(text, usage=None)])
    result = await generate_suggestions(model, make_input(language="en", anchor_text="Where is your pass?"), config())
    assert result.usage.estimated is True
    assert result.usage.output_tokens == -(-len(text) // 4)
    assert result.usage.total_tokens == result.usage.input_tokens + result.usage.output_tokens


async def test_cut_off_output_names_the_token_limit():
    model = ScriptedModel([FakeResult('{"options": ["我', FakeUsage(10, 384), finish_reason="length"), GOOD_ZH])
    result = await generate_suggestions(model, make_input(), config())
    assert "output was cut off at maxTokens (384)" in result.attempts[0].problems


async def test_disabled_config_makes_no_model_call():
    model = ScriptedModel([GOOD_ZH])
    with pytest.raises(AutoReplyDisabled):
        await generate_suggestions(model, make_input(), config(enabled=False))
    assert model.history == []


async def test_suggestion_count_and_length_limits_come_from_the_config():
    model = ScriptedModel([["我等等", "你说吧"], ["我等等", "继续说吧"]])
    result = await generate_suggestions(model, make_input(), config(suggestion_count=2, max_suggestion_chars=32))
    assert result.options == ["我等等", "你说吧"]
    assert "exactly 2 different options" in model.prompt() and "at most 32 characters" in model.prompt()
