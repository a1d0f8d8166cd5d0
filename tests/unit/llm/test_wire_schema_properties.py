"""Property tests of the one Struct → wire-schema path over generated Struct shapes.

Field names collide with JSON-Schema keywords on purpose (round 1 lost every field called
``title``); shapes nest Structs, optionals, lists and literals, and some fields are renamed. For
each shape: (a) the schema meets strict-mode rules, (b) every instance generated from the schema
(the simulator's generator, i.e. what a schema-following server may send) decodes into the Struct,
and (c) a per-request ``enum`` constraint reaches exactly the node its path names.
"""

import random
from typing import Literal, Optional

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.llm.schema import strict_problems, token_budget, unbounded, wire_schema
from app.llm.simulator.instances import InstanceGenerator

KEYWORD_NAMES = ["title", "default", "type", "description", "format", "enum", "items", "properties",
                 "required", "$ref", "anyOf", "const", "additionalProperties", "$defs"]
PLAIN_NAMES = ["name", "reason", "ids", "note", "score", "flag"]

_counter = iter(range(10**9))

scalar_types = st.sampled_from([str, int, float, bool, Literal["a", "b"], Literal[1, 2, 3]])


def _struct_of(fields, rename):
    name = f"Gen{next(_counter)}"
    return msgspec.defstruct(name, fields, forbid_unknown_fields=True, rename=rename)


@st.composite
def field_types(draw, depth):
    base = draw(scalar_types) if depth >= 2 else draw(st.one_of(scalar_types, struct_types(depth + 1)))
    wrap = draw(st.sampled_from(["plain", "list", "optional", "optional_list"]))
    if wrap == "list":
        return list[base]
    if wrap == "optional":
        return Optional[base]
    if wrap == "optional_list":
        return Optional[list[base]]
    return base


@st.composite
def struct_types(draw, depth=0):
    names = draw(st.lists(st.sampled_from(KEYWORD_NAMES + PLAIN_NAMES), min_size=1, max_size=5, unique=True))
    fields = []
    for i, wire in enumerate(names):
        typ = draw(field_types(depth))
        py = f"f{i}"
        has_default = draw(st.booleans())
        default = msgspec.field(name=wire, default=None) if has_default and _optional(typ) else msgspec.field(name=wire)
        fields.append((py, typ, default))
    fields.sort(key=lambda f: f[2].default is not msgspec.NODEFAULT)  # required before defaulted
    return _struct_of(fields, draw(st.sampled_from([None, "camel"])))


def _optional(typ) -> bool:
    return getattr(typ, "__args__", None) is not None and type(None) in typ.__args__


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(struct_types(), st.integers(0, 2**32))
def test_every_generated_shape_is_strict_and_every_schema_instance_decodes(struct_type, seed):
    schema = wire_schema(struct_type)
    assert strict_problems(schema) == []
    wire_names = set(msgspec.structs.fields(struct_type)[i].encode_name for i in range(len(struct_type.__struct_fields__)))
    assert set(schema["properties"]) == wire_names  # keyword-named fields survive
    generator = InstanceGenerator(schema, random.Random(seed))
    for _ in range(5):
        instance = generator.generate()
        msgspec.json.decode(msgspec.json.encode(instance), type=struct_type)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="abcxyz", min_size=1, max_size=6), min_size=1, max_size=4, unique=True),
       st.integers(1, 4), st.integers(0, 2**32))
def test_an_enum_constraint_on_list_items_bounds_what_a_schema_following_server_sends(ids, limit, seed):
    class Pick(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
        selected_agent_ids: list[str]
        title: str

    schema = wire_schema(Pick, {"selectedAgentIds": {"maxItems": limit}, "selectedAgentIds[]": {"enum": ids},
                                "title": {"maxLength": 20}})
    assert unbounded(schema) == [] and strict_problems(schema) == []
    value = msgspec.json.decode(msgspec.json.encode(InstanceGenerator(schema, random.Random(seed)).generate()), type=Pick)
    assert set(value.selected_agent_ids) <= set(ids) and len(value.selected_agent_ids) <= limit
    assert len(value.title) <= 20


class Inner(msgspec.Struct, forbid_unknown_fields=True):
    quote: str
    title: str


class Outer(msgspec.Struct, forbid_unknown_fields=True):
    items: list[Inner]
    maybe: Inner | None
    default: str = "x"


def test_paths_reach_list_items_and_optional_branches_and_only_there():
    schema = wire_schema(Outer, {"items[].quote": {"maxLength": 7}, "maybe.title": {"maxLength": 3}})
    assert schema["properties"]["items"]["items"]["properties"]["quote"]["maxLength"] == 7
    assert "maxLength" not in schema["properties"]["items"]["items"]["properties"]["title"]
    maybe = next(b for b in schema["properties"]["maybe"]["anyOf"] if b.get("type") == "object")
    assert maybe["properties"]["title"]["maxLength"] == 3 and "maxLength" not in maybe["properties"]["quote"]


def test_a_path_that_names_nothing_is_an_error_not_a_silently_dropped_constraint():
    import pytest

    from app.llm.schema import SchemaError

    with pytest.raises(SchemaError):
        wire_schema(Outer, {"items[].quotes": {"maxLength": 7}})


def test_token_budget_grows_with_what_the_schema_allows():
    small = wire_schema(Outer, {"items": {"maxItems": 1}, "items[].quote": {"maxLength": 10},
                                "items[].title": {"maxLength": 10}, "maybe.quote": {"maxLength": 10},
                                "maybe.title": {"maxLength": 10}, "default": {"maxLength": 10}})
    large = wire_schema(Outer, {"items": {"maxItems": 5}, "items[].quote": {"maxLength": 100},
                                "items[].title": {"maxLength": 10}, "maybe.quote": {"maxLength": 10},
                                "maybe.title": {"maxLength": 10}, "default": {"maxLength": 10}})
    assert 40 < token_budget(small) < token_budget(large) < 1000


def test_a_small_answer_fits_its_budget_at_the_grammars_worst_whitespace():
    """llama.cpp's grammar allows "\\n\\n" plus 20 blanks after every key, colon, comma, value and
    bracket. Counted at a token per character (byte-level vocabularies never need more for ASCII
    blanks), the story.prepare answer written that way still fits its budget (CI cut it at 64)."""
    from story.tools.prepare_turn import ActionClassification

    schema = wire_schema(ActionClassification, {"target_id": {"enum": ["bg_market_at_dawn", None]}})
    ws = "\n\n" + " " * 20
    worst = ("{" + ws + '"target_id"' + ws + ":" + ws + '"bg_market_at_dawn"' + ws + "," + ws
             + '"companion_follows"' + ws + ":" + ws + "false" + ws + "}" + ws)
    assert msgspec.json.decode(worst, type=ActionClassification).target_id == "bg_market_at_dawn"
    assert len(worst) <= token_budget(schema)
