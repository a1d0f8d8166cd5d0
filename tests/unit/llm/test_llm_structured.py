import json
from typing import Annotated, Literal

import msgspec
import pytest

from app.errors import InvalidModelOutput, ModelTimeout
from app.llm.fakes import FunctionModel, ScriptedModel
from app.llm.port import ChatMessage, ModelRequest
from app.llm.schema import MIN_TOKEN_BUDGET, SchemaError, wire_schema
from app.llm.structured import complete_struct, decode_text


class Inner(msgspec.Struct, forbid_unknown_fields=True):
    weight: int = 1


class Mood(msgspec.Struct, forbid_unknown_fields=True):
    mood: Literal["calm", "upset"]
    intensity: Annotated[float, msgspec.Meta(ge=0, le=1)]
    inner: Inner
    default: str = "x"  # a field *named* default must survive the fix-up
    note: str | None = None


class Tree(msgspec.Struct):
    children: list["Tree"]


def request(purpose: str = "emotion") -> ModelRequest:
    return ModelRequest(messages=[ChatMessage("user", "I'm fine")], purpose=purpose)


GOOD = {"mood": "calm", "intensity": 0.5, "inner": {"weight": 2}, "default": "d", "note": None}


def test_wire_schema_inlines_every_struct_and_requires_every_property():
    schema = wire_schema(Mood)
    assert "$ref" not in json.dumps(schema) and "$defs" not in schema and schema["type"] == "object"
    assert schema["required"] == ["mood", "intensity", "inner", "default", "note"]
    assert schema["additionalProperties"] is False
    inner = schema["properties"]["inner"]
    assert inner["required"] == ["weight"] and inner["additionalProperties"] is False
    assert "default" not in inner["properties"]["weight"]
    assert "default" in schema["properties"]


def test_wire_schema_refuses_recursive_output_types():
    with pytest.raises(SchemaError):
        wire_schema(Tree)


def test_decode_tolerates_a_json_code_fence():
    assert decode_text('```json\n{"weight": 3}\n```', Inner) == Inner(3)


async def test_valid_first_answer_needs_one_attempt():
    model = ScriptedModel().enqueue("emotion", GOOD)
    outcome = await complete_struct(model, request(), Mood)
    assert outcome.value.mood == "calm"
    assert [a.problem for a in outcome.attempts] == [None]
    assert outcome.usage.estimated
    sent = model.history[0]
    assert sent.response_schema.name == "mood" and sent.response_schema.schema == wire_schema(Mood)


async def test_wrong_first_answer_is_repaired_with_the_error_shown_to_the_model():
    answers = iter(['{"mood": "ecstatic", "intensity": 0.5}', GOOD])
    model = FunctionModel(lambda req: next(answers))
    outcome = await complete_struct(model, request(), Mood, repairs=1)
    assert outcome.value.inner == Inner(2)
    assert len(outcome.attempts) == 2 and outcome.attempts[1].problem is None
    assert "$.mood" in outcome.attempts[0].problem
    repair = model.history[1].messages
    assert repair[-2].role == "assistant" and "ecstatic" in repair[-2].content
    assert repair[-1].role == "user" and "$.mood" in repair[-1].content
    first, second = (model.history[0].messages, model.history[1].messages)
    assert len(second) == len(first) + 2


async def test_usage_is_summed_over_attempts():
    answers = iter(["not json", GOOD])
    model = FunctionModel(lambda req: next(answers))
    outcome = await complete_struct(model, request(), Mood, repairs=2)
    single = (await complete_struct(ScriptedModel().enqueue("emotion", GOOD), request(), Mood)).usage
    assert outcome.usage.output_tokens > single.output_tokens


async def test_always_wrong_raises_invalid_output_with_every_problem():
    model = FunctionModel(lambda req: "")
    with pytest.raises(InvalidModelOutput) as info:
        await complete_struct(model, request(), Mood, repairs=2)
    assert info.value.attempts == 3 and len(model.history) == 3
    assert info.value.problems == ["the reply was empty"] * 3
    assert len(info.value.diagnostics) == 3


async def test_semantic_validator_problems_trigger_a_repair():
    answers = iter([{**GOOD, "intensity": 0.9}, GOOD])
    model = FunctionModel(lambda req: next(answers))

    def not_too_intense(value: Mood) -> list[str]:
        return [f"intensity {value.intensity} is too high for a calm mood"] if value.intensity > 0.8 else []

    outcome = await complete_struct(model, request(), Mood, repairs=1, validate=not_too_intense)
    assert outcome.value.intensity == 0.5
    assert "too high" in outcome.attempts[0].problem
    assert "too high" in model.history[1].messages[-1].content


async def test_zero_repairs_means_a_single_attempt():
    model = FunctionModel(lambda req: "{}")
    with pytest.raises(InvalidModelOutput) as info:
        await complete_struct(model, request(), Mood, repairs=0)
    assert info.value.attempts == 1


async def test_model_errors_propagate_without_repair():
    model = ScriptedModel().enqueue("emotion", ModelTimeout("slow"), GOOD)
    with pytest.raises(ModelTimeout):
        await complete_struct(model, request(), Mood, repairs=3)
    assert model.remaining("emotion") == 1


async def test_any_request_shaped_object_is_accepted():
    class LibRequest(msgspec.Struct):
        messages: list[ChatMessage]
        purpose: str

    model = ScriptedModel().enqueue("emotion", GOOD)
    outcome = await complete_struct(model, LibRequest([ChatMessage("user", "hi")], "emotion"), Mood)
    assert outcome.value.mood == "calm"


async def test_a_repair_changes_the_request_a_warmer_temperature_and_the_problem_named():
    answers = iter(['{"mood": "ecstatic"}', GOOD])
    model = FunctionModel(lambda req: next(answers))
    await complete_struct(model, msgspec.structs.replace(request(), temperature=0.0), Mood, repairs=1)
    first, second = model.history
    assert first.temperature == 0.0 and second.temperature > first.temperature
    assert "ecstatic" in second.messages[-1].content or "$.mood" in second.messages[-1].content


async def test_an_answer_cut_off_by_the_token_budget_is_never_resent():
    from app.llm.port import ModelResult, Usage

    cut = '{"mood": "calm", "intensity": 0.5, "inner": {"weight": 2}, "default": "' + "x" * 500
    answers = iter([ModelResult(cut, Usage(1, 1), "m", "length"), GOOD])
    model = FunctionModel(lambda req: next(answers))
    outcome = await complete_struct(model, request(), Mood, repairs=1)
    assert outcome.value == msgspec.convert(GOOD, Mood)
    repair = model.history[1].messages
    assert all(cut not in m.content for m in repair) and all(m.role != "assistant" for m in repair)
    assert "cut off" in outcome.attempts[0].problem and outcome.attempts[0].finish_reason == "length"


async def test_every_structured_request_carries_a_schema_sized_token_budget():
    model = ScriptedModel().enqueue("emotion", GOOD)
    await complete_struct(model, request(), Mood, constraints={"default": {"maxLength": 50}, "note": {"maxLength": 50}})
    assert 50 < model.history[0].max_tokens < 400


async def test_a_cjk_prompt_gets_the_cjk_token_budget():
    constraints = {"default": {"maxLength": 300}, "note": {"maxLength": 300}}  # both above the floor
    latin, cjk = ScriptedModel().enqueue("emotion", GOOD, GOOD), None
    await complete_struct(latin, request(), Mood, constraints=constraints)
    zh = ModelRequest(messages=[ChatMessage("user", "我今天有点难过，不知道该怎么办")], purpose="emotion")
    await complete_struct(latin, zh, Mood, constraints=constraints)
    en_budget, zh_budget = (r.max_tokens for r in latin.history)
    assert en_budget > MIN_TOKEN_BUDGET
    assert zh_budget >= en_budget + 2 * 600  # two strings of 300 characters at three tokens each


async def test_a_looping_answer_is_not_resent_and_its_repair_penalises_repeats():
    """Qwen2.5-0.5B's world for the joker: one sentence over and over in a string; shown it again,
    the repair looped again. The repair now describes the problem without the answer, penalised."""
    loop = "今天，我和你开始聊天。" * 12
    answers = iter([{**GOOD, "default": loop}, GOOD])
    model = FunctionModel(lambda req: next(answers))

    def check(v: Mood) -> list[str]:
        return ["default loops"] if v.default == loop else []

    outcome = await complete_struct(model, request(), Mood, repairs=1, validate=check)
    assert outcome.value == msgspec.convert(GOOD, Mood)
    first, second = model.history
    assert first.frequency_penalty is None and second.frequency_penalty == 0.5
    assert all(loop not in m.content for m in second.messages) and all(m.role != "assistant" for m in second.messages)
    assert "default loops" in second.messages[-1].content


async def test_an_answer_that_does_not_loop_is_resent_as_before_without_a_penalty():
    answers = iter([{**GOOD, "mood": "ecstatic"}, GOOD])
    model = FunctionModel(lambda req: next(answers))
    await complete_struct(model, request(), Mood, repairs=1)
    repair = model.history[1]
    assert repair.frequency_penalty is None and any(m.role == "assistant" for m in repair.messages)
