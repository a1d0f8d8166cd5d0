"""The simulator's schema-instance generator: every generated value decodes into its Struct."""

import random
import uuid
from datetime import datetime
from typing import Annotated, Literal

import msgspec
import pytest

from app.llm.simulator.instances import generate_instance, violate
from app.llm.simulator.language import detect_language
from app.llm.schema import SchemaError, wire_schema


def strict_schema(struct_type):
    """The wire schema; recursive shapes (never a model output type) keep msgspec's ``$ref``s,
    which the simulator must still resolve."""
    try:
        return wire_schema(struct_type)
    except SchemaError:
        return msgspec.json.schema(struct_type)


class Limits(msgspec.Struct, forbid_unknown_fields=True):
    count: Annotated[int, msgspec.Meta(ge=3, le=5)]
    odd_step: Annotated[int, msgspec.Meta(gt=0, lt=100, multiple_of=7)]
    ratio: Annotated[float, msgspec.Meta(gt=0.0, lt=1.0)]
    name: Annotated[str, msgspec.Meta(min_length=2, max_length=6)]
    long_text: Annotated[str, msgspec.Meta(min_length=40)]
    tags: Annotated[list[str], msgspec.Meta(min_length=2, max_length=4)]
    kind: Literal["a", "b", "c"]
    flag: bool


class Member(msgspec.Struct, forbid_unknown_fields=True):
    agent_id: str
    pair: tuple[int, str]


class Team(msgspec.Struct, forbid_unknown_fields=True):
    lead: Member
    members: list[Member]
    scores: dict[str, float]
    backup: Member | None = None


class Node(msgspec.Struct):
    label: str
    children: list["Node"]


@pytest.mark.parametrize("struct_type", [Limits, Team, Node])
@pytest.mark.parametrize("seed", range(20))
def test_generated_instances_decode_into_the_struct(struct_type, seed):
    schema = strict_schema(struct_type)
    value = generate_instance(schema, random.Random(seed))
    msgspec.convert(value, struct_type, strict=False)


def test_generation_is_deterministic_for_a_seed():
    schema = strict_schema(Team)
    assert generate_instance(schema, random.Random(5)) == generate_instance(schema, random.Random(5))


def test_strings_follow_the_requested_language_and_say_simulated():
    schema = strict_schema(Limits)
    zh = generate_instance(schema, random.Random(1), "zh")
    en = generate_instance(schema, random.Random(1), "en")
    assert detect_language(zh["long_text"]) == "zh" and zh["long_text"].startswith("模拟")
    assert en["long_text"].startswith("simulated")


@pytest.mark.parametrize(("text", "language"), [("你好吗", "zh"), ("こんにちは、元気", "ja"), ("안녕하세요", "ko"), ("hello", "en"), ("", "en")])
def test_language_detection_by_script(text, language):
    assert detect_language(text) == language


@pytest.mark.parametrize("struct_type", [Limits, Team])
def test_violations_never_decode(struct_type):
    schema = strict_schema(struct_type)
    for seed in range(10):
        broken = violate(generate_instance(schema, random.Random(seed)), schema)
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert(broken, struct_type, strict=False)


def test_string_formats_are_honoured():
    schema = {"type": "object", "properties": {"when": {"type": "string", "format": "date-time"},
                                               "key": {"type": "string", "format": "uuid"}},
              "required": ["when", "key"]}
    value = generate_instance(schema, random.Random(3))
    msgspec.json.decode(msgspec.json.encode(value["when"]), type=datetime)
    uuid.UUID(value["key"])


def test_id_fields_of_one_object_take_different_values_when_their_enums_allow():
    from app.turns.cross import CrossReplyDecision, plan_constraints

    schema = wire_schema(CrossReplyDecision, plan_constraints(["a", "b", "c"], ["a", "b"]))
    pairs = [generate_instance(schema, random.Random(seed))["reply"] for seed in range(300)]
    pairs = [(p["fromAgentId"], p["toAgentId"]) for p in pairs if p is not None]
    assert len(pairs) > 100 and all(f != t for f, t in pairs)
    assert {f for f, _ in pairs} == {"a", "b", "c"} and {t for _, t in pairs} == {"a", "b"}
    # one value left for both: the enum wins, the answer stays valid
    only = wire_schema(CrossReplyDecision, {"reply.fromAgentId": {"enum": ["a"]}, "reply.toAgentId": {"enum": ["a"]}})
    assert generate_instance(only, random.Random(1))["reply"] in (None, {"fromAgentId": "a", "toAgentId": "a"})


def test_fields_that_are_not_ids_may_share_a_value():
    schema = {"type": "object", "properties": {"x": {"enum": ["a", "b"]}, "y": {"enum": ["a", "b"]}},
              "required": ["x", "y"], "additionalProperties": False}
    values = [generate_instance(schema, random.Random(seed)) for seed in range(50)]
    assert any(v["x"] == v["y"] for v in values)
