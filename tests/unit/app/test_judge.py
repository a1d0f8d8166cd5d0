"""The LLM quality judge: the request it sends (the real wire schema), how a verdict is decoded and
settled, the passing fallback when the judge is down, the regeneration note and the
``quality_events`` rows."""

from __future__ import annotations

import pytest

from app.db.models import Agent
from app.errors import ModelTimeout
from app.llm.fakes import FunctionModel, ScriptedModel
from app.llm.port import ChatMessage, ModelRequest
from app.llm.schema import strict_problems, unbounded, wire_schema
from app.llm.templates import PromptTemplates
from app.turns.judge import (
    PASS_WITHOUT_CHECK, PROBLEM_CODES, QUALITY_CONSTRAINTS, REASON_MAX_CHARS, QualityVerdict, judge_reply,
    judge_request, regeneration_note, verdict_quality_rows,
)  # fmt: skip
from app.turns.quality import problem_code
from app.turns.records import quality_rows
from app.turns.actor_prompt import retry_request
from app.turns.replies import Reply

LIA = Agent(id="lia", name="莉娅", aliases=[], personality_prompt="温柔、耐心的倾听者", guardrails_prompt="不谈论政治")
ARGS = {"language": "zh-CN", "transcript": "用户: 早上好\n周衡: 早", "user_text": "我今天好难过",
        "reply_text": "别难过，我陪着你。"}  # fmt: skip


async def _judge(model, templates: PromptTemplates | None = None):
    return await judge_reply(model, templates or PromptTemplates(), LIA, **ARGS)


def test_the_request_renders_the_quality_template_with_the_character_and_fences_the_draft() -> None:
    request = judge_request(PromptTemplates(), LIA, **ARGS)
    assert request.purpose == "quality" and request.temperature == 0.0 and request.response_schema is None
    system, user = request.messages
    assert (system.role, user.role) == ("system", "user")
    assert "莉娅" in system.content and "zh-CN" in system.content
    assert "温柔、耐心的倾听者" in system.content and "不谈论政治" in system.content  # persona and guardrails
    assert "{{" not in system.content
    assert all(code in system.content for code in PROBLEM_CODES)  # the codes, from code, not the template
    assert ARGS["transcript"] in user.content and ARGS["user_text"] in user.content
    assert f"<<<\n{ARGS['reply_text']}\n>>>" in user.content


def test_a_language_only_override_of_the_quality_template_still_validates_and_renders() -> None:
    templates = PromptTemplates({"quality": "Judge the reply, in {{getvar::language}}."})
    templates.validate()
    system = judge_request(templates, LIA, **ARGS).messages[0].content
    assert system.startswith("Judge the reply, in zh-CN.") and "out_of_character" in system


async def test_the_wire_schema_is_the_strict_bounded_schema_of_the_verdict() -> None:
    model = ScriptedModel().enqueue("quality", {"passed": True, "problems": [], "reason": "符合人设"})
    run = await _judge(model)
    sent = model.history[0].response_schema
    assert sent.name == "quality_verdict"
    assert sent.schema == wire_schema(QualityVerdict, QUALITY_CONSTRAINTS)
    assert strict_problems(sent.schema) == [] and unbounded(sent.schema) == []
    props = sent.schema["properties"]
    assert sorted(props) == ["passed", "problems", "reason"] and sent.schema["required"] == ["passed", "problems", "reason"]
    assert sorted(props["problems"]["items"]["enum"]) == sorted(PROBLEM_CODES)
    assert props["problems"]["maxItems"] == len(PROBLEM_CODES)
    assert props["reason"]["maxLength"] == REASON_MAX_CHARS
    assert model.history[0].max_tokens  # sized from the schema
    assert run.source == "llm" and run.attempts == 1 and run.stage == "quality"
    assert run.value == QualityVerdict(passed=True, problems=[], reason="符合人设")


async def test_a_failed_verdict_decodes_with_its_problem_codes() -> None:
    answer = {"passed": False, "problems": ["out_of_character", "speaks_for_others"], "reason": "替用户做了决定"}
    run = await _judge(ScriptedModel().enqueue("quality", answer))
    assert run.source == "llm" and not run.value.passed
    assert run.value.problems == ["out_of_character", "speaks_for_others"]


@pytest.mark.parametrize(
    ("answer", "passed", "problems"),
    [({"passed": True, "problems": ["unsafe"], "reason": "x"}, False, ["unsafe"]),  # a problem named: fails
     ({"passed": False, "problems": [], "reason": "x"}, True, []),  # nothing named: nothing to fix, passes
     ({"passed": False, "problems": ["off_topic", "off_topic"], "reason": "x"}, False, ["off_topic"])],
)  # fmt: skip
async def test_the_problem_list_decides(answer, passed, problems) -> None:
    run = await _judge(ScriptedModel().enqueue("quality", answer))
    assert (run.value.passed, run.value.problems) == (passed, problems)


async def test_a_long_reason_from_a_lenient_provider_is_clamped() -> None:
    run = await _judge(ScriptedModel().enqueue("quality", {"passed": True, "problems": [], "reason": "好" * 500}))
    assert run.source == "llm" and len(run.value.reason) == REASON_MAX_CHARS


async def test_an_unknown_problem_code_is_repaired_once() -> None:
    model = ScriptedModel().enqueue("quality", {"passed": False, "problems": ["rude"], "reason": "x"},
                                    {"passed": False, "problems": ["unsafe"], "reason": "x"})  # fmt: skip
    run = await _judge(model)
    assert run.source == "llm" and run.attempts == 2 and run.value.problems == ["unsafe"]
    assert "rude" in model.history[1].messages[-1].content or "rude" in model.history[1].messages[-2].content


async def test_model_failure_passes_with_source_fallback() -> None:
    run = await _judge(ScriptedModel().enqueue("quality", ModelTimeout("judge timed out")))
    assert run.source == "fallback" and run.value == PASS_WITHOUT_CHECK and run.value.passed
    assert run.error["code"] == "model_timeout"


async def test_invalid_answers_after_the_repair_pass_with_source_fallback() -> None:
    run = await _judge(ScriptedModel().enqueue("quality", "not json", '{"passed": "no"}'))
    assert run.source == "fallback" and run.value.passed and run.attempts == 2
    assert run.error["code"] == "invalid_model_output"


async def test_no_model_for_the_stage_passes_with_source_fallback() -> None:
    class NoJudge(ScriptedModel):
        def is_configured(self, stage: str) -> bool:
            return stage != "quality"

    model = NoJudge()
    run = await _judge(model)
    assert run.source == "fallback" and run.value.passed and run.error["code"] == "model_not_configured"
    assert model.history == []


async def test_an_unexpected_error_in_the_judge_does_not_block_the_reply() -> None:
    def broken(request):
        raise RuntimeError("boom")

    run = await _judge(FunctionModel(broken))
    assert run.source == "fallback" and run.value.passed and run.error["code"] == "internal_error"


def test_regeneration_note_names_each_problem_for_the_actor() -> None:
    verdict = QualityVerdict(passed=False, problems=["out_of_character", "off_topic"], reason="像客服一样说话")
    notes = regeneration_note(verdict)
    assert [problem_code(n) for n in notes] == ["out_of_character", "off_topic"]
    assert "像客服一样说话" in notes[0] and "像客服一样说话" not in notes[1]
    assert regeneration_note(QualityVerdict(passed=True, problems=[], reason="ok")) == []
    actor = ModelRequest(messages=[ChatMessage("system", "persona"), ChatMessage("user", "hi")], purpose="actor")
    retry = retry_request(actor, notes, "zh-CN")
    assert retry.messages[1:] == actor.messages[1:]  # the conversation unchanged: nothing new to answer
    head, correction = retry.messages[0].content.split("\n\n")
    assert head == "persona" and correction == "这次换一种说法：保持你的人设和语气；回应用户刚才说的事。"
    assert "像客服一样说话" not in correction and "out_of_character" not in correction  # nothing a model could say


def test_rows_are_one_per_problem_code_like_the_deterministic_ones() -> None:
    verdict = QualityVerdict(passed=False, problems=["unsafe", "repetitive"], reason="x")
    rows = verdict_quality_rows("t1", "c1", "lia", "cross", verdict, "dropped")
    assert rows == [
        {"turn_id": "t1", "conversation_id": "c1", "agent_id": "lia", "reply_kind": "cross", "reason": "unsafe", "action": "dropped"},
        {"turn_id": "t1", "conversation_id": "c1", "agent_id": "lia", "reply_kind": "cross", "reason": "repetitive", "action": "dropped"},
    ]  # fmt: skip
    same_shape = quality_rows("t1", "c1", [Reply(agent_id="lia", text="", regenerated_for=["too_long: 9 > 4"])])
    assert set(same_shape[0]) == set(rows[0])
    assert verdict_quality_rows("t1", "c1", "lia", "primary", PASS_WITHOUT_CHECK, "regenerated") == []
    with pytest.raises(ValueError, match="action"):
        verdict_quality_rows("t1", "c1", "lia", "primary", verdict, "passed")


def test_judge_codes_do_not_collide_with_the_deterministic_codes() -> None:
    deterministic = {"empty", "too_long", "duplicate", "near_duplicate", "wrong_script", "speaks_as_other",
                     "degenerate_repetition", "degenerate_punctuation"}  # fmt: skip
    assert not deterministic & set(PROBLEM_CODES)


def test_the_quality_check_setting_is_off_by_default_and_on_by_env_or_toml(tmp_path) -> None:
    from app.errors import SettingsError
    from app.settings import load_settings

    base = {"COMPANION_DATA_DIR": str(tmp_path), "COMPANION_JWT_SECRET": "x" * 32}
    assert load_settings(base).quality_check is False
    assert load_settings({**base, "COMPANION_QUALITY_CHECK": "1"}).quality_check is True
    cfg = tmp_path / "c.toml"
    cfg.write_text("[turns]\nqualityCheck = true\n")
    assert load_settings({**base, "COMPANION_CONFIG": str(cfg)}).quality_check is True
    assert load_settings({**base, "COMPANION_CONFIG": str(cfg), "COMPANION_QUALITY_CHECK": "off"}).quality_check is False
    with pytest.raises(SettingsError, match="COMPANION_QUALITY_CHECK"):
        load_settings({**base, "COMPANION_QUALITY_CHECK": "maybe"})
