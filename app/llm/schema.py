"""The one path from a msgspec Struct to the JSON schema sent on the wire.

Strict structured-output servers (OpenAI strict mode, llama.cpp's grammar compiler, our
simulator) generate *exactly* what the schema allows, so the schema must say everything the
decoder and the stage's checks require:

- it is walked as schema *nodes*: keys of a ``properties`` map are field names, never keywords,
  so a field called ``title``, ``default`` or ``$ref`` survives (round 1 lost them);
- every ``$ref`` is inlined (Structs used for model output are not recursive), so a per-request
  constraint lands on one place only and no server has to resolve references;
- every object has all its properties required and ``additionalProperties: false``;
- annotation keywords strict mode rejects or a model would read as instructions (``default``,
  ``title``, Struct docstrings, ``discriminator``, ``$schema``) are dropped;
- per-request constraints — the candidates' ids as an ``enum``, ``maxItems``, ``maxLength`` —
  are merged in by path: ``"selectedAgentIds"`` is the property, ``"selectedAgentIds[]"`` its
  items, ``"replies[].agentId"`` a field inside list items. A path that names nothing raises,
  so a renamed field cannot silently drop a constraint.

``token_budget`` sizes ``max_tokens`` from the same schema, so a constrained model cannot loop
until the server's context is full.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Mapping
from typing import Any

import msgspec

Constraints = Mapping[str, Mapping[str, Any]]

# Keywords that annotate instead of constrain: strict servers reject some, and a model reads the
# Struct docstrings msgspec puts in ``description`` as instructions meant for developers.
_DROPPED = frozenset({"default", "title", "discriminator", "$schema", "examples"})
_PATH_PART = re.compile(r"([^.\[\]]+)((?:\[\])*)")


class SchemaError(ValueError):
    """A constraint path or a Struct shape the wire schema cannot express."""


def wire_schema(struct_type: Any, constraints: Constraints | None = None) -> dict[str, Any]:
    """Strict, self-contained JSON schema of ``struct_type`` with ``constraints`` applied.

    Built once per Struct (the walk is cached, as JSON); the constraints are applied to a fresh
    copy (decoded from that JSON: several times faster than ``copy.deepcopy``, on every call)."""
    schema = _JSON.decode(_base_schema(struct_type))
    for path, extra in (constraints or {}).items():
        for target in _targets(schema, path):
            target.update(copy.deepcopy(dict(extra)))
    return schema


_JSON = msgspec.json.Decoder(dict[str, Any])


@functools.lru_cache(maxsize=256)
def _base_schema(struct_type: Any) -> bytes:
    raw = msgspec.json.schema(struct_type)
    defs = raw.pop("$defs", {})
    return msgspec.json.encode(_node(raw, defs, seen=()))


def _node(node: Any, defs: Mapping[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_node(v, defs, seen) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.removeprefix("#/$defs/")
        if name in seen or name not in defs:
            raise SchemaError(f"recursive or unknown $ref {ref!r}: model output types must not be recursive")
        merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return _node(merged, defs, (*seen, name))
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _node(sub, defs, seen) for name, sub in value.items()}  # names, not keywords
        elif key == "description" and node.get("type") == "object":
            continue  # a Struct docstring: for developers, not for the model
        else:
            out[key] = _node(value, defs, seen)
    if isinstance(out.get("properties"), dict):
        out["type"] = "object"
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


def _branches(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The non-null alternatives of an optional/union node, or the node itself."""
    for key in ("anyOf", "oneOf"):
        if key in node:
            return [b for alt in node[key] for b in _branches(alt) if b.get("type") != "null"]
    return [node]


def _targets(schema: dict[str, Any], path: str) -> list[dict[str, Any]]:
    nodes = [schema]
    for match in _PATH_PART.finditer(path):
        name, brackets = match.group(1), match.group(2)
        nxt = []
        for node in nodes:
            for branch in _branches(node):
                prop = branch.get("properties", {}).get(name)
                if prop is not None:
                    nxt.append(prop)
        for _ in range(len(brackets) // 2):
            nxt = [b["items"] for n in nxt for b in _branches(n) if isinstance(b.get("items"), dict)]
        if not nxt:
            raise SchemaError(f"constraint path {path!r} names no field (at {name!r})")
        nodes = nxt
    return [b for n in nodes for b in _branches(n)]


# -- checks and sizes -------------------------------------------------------------------------

STRICT_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
    "description", "minItems", "maxItems", "minLength", "maxLength", "pattern", "format", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "prefixItems",
})


def strict_problems(schema: Any, path: str = "$") -> list[str]:
    """Where ``schema`` breaks OpenAI strict-mode rules or leaves the model unbounded."""
    problems: list[str] = []
    if isinstance(schema, list):
        for i, v in enumerate(schema):
            problems += strict_problems(v, f"{path}[{i}]")
        return problems
    if not isinstance(schema, dict):
        return problems
    for key, value in schema.items():
        if key not in STRICT_KEYWORDS:
            problems.append(f"{path}: unsupported keyword {key!r}")
        if key == "properties":
            for name, sub in value.items():
                problems += strict_problems(sub, f"{path}.{name}")
        elif key in ("items", "anyOf", "prefixItems"):
            problems += strict_problems(value, f"{path}{'[]' if key == 'items' else ''}")
    if "properties" in schema:
        if schema.get("additionalProperties") is not False:
            problems.append(f"{path}: additionalProperties must be false")
        if sorted(schema.get("required", [])) != sorted(schema["properties"]):
            problems.append(f"{path}: every property must be required")
    elif schema.get("type") == "object":
        problems.append(f"{path}: an object needs declared properties (no free-form maps)")
    return problems


def unbounded(schema: Any, path: str = "$") -> list[str]:
    """Free strings without ``maxLength`` and lists without ``maxItems``: what a model can loop on."""
    found: list[str] = []
    if not isinstance(schema, dict):
        return found
    for branch in _branches(schema):
        kind = branch.get("type")
        if "enum" in branch or "const" in branch:
            continue
        if kind == "string" and "maxLength" not in branch:
            found.append(path)
        if kind == "array":
            if "maxItems" not in branch:
                found.append(path)
            found += unbounded(branch.get("items", {}), path + "[]")
        for name, sub in branch.get("properties", {}).items():
            found += unbounded(sub, f"{path}.{name}")
    return found


# Latin text is about four characters per token, so one token per character is ample; byte-level
# vocabularies of small models split a CJK character into up to three tokens (a zh cross-reply
# reason of 200 characters was cut off at one token per character).
TOKENS_PER_CHAR = 1
TOKENS_PER_CJK_CHAR = 3
UNBOUNDED_STRING_TOKENS = 256


# llama.cpp's JSON-schema grammar lets a model put whitespace after every key, colon, comma, value
# and bracket (``space ::= | " " | "\n"{1,2} [ \t]{0,20}``), up to ~22 tokens at each place. In a
# large schema the string allowances (a token per character, text averages four) leave room for
# that; a small one made of enums and booleans has none: a two-field story.prepare answer from a
# 135M model ran past a floor of 64 (CI). At the grammar's worst case, even counted a token per
# character, such an answer fits in 320.
MIN_TOKEN_BUDGET = 320


def token_budget(schema: Any, tokens_per_char: int = TOKENS_PER_CHAR) -> int:
    """Output tokens a schema-following answer can need: generous for the longest valid answer.

    Strings count ``tokens_per_char`` per allowed character (3 for CJK answers), plus quotes; keys,
    punctuation and the whitespace of pretty-printed JSON (grammar-constrained servers let the
    model indent) several tokens each. A schema with an unbounded part gets a fixed allowance
    there. Never below ``MIN_TOKEN_BUDGET``: the budget is a cap, not a target.
    """
    return max(MIN_TOKEN_BUDGET, _tokens(schema, tokens_per_char))


def _tokens(schema: Any, per_char: int) -> int:
    if not isinstance(schema, dict):
        return 4
    if "const" in schema:
        return 2 + len(str(schema["const"])) // 2
    if "enum" in schema:
        return 3 + max((len(str(v)) for v in schema["enum"]), default=1)
    alternatives = [_tokens(b, per_char) for b in schema.get("anyOf", [])]
    if alternatives:
        return max(alternatives)
    kind = schema.get("type")
    if isinstance(kind, list):
        return max(_tokens({**schema, "type": k}, per_char) for k in kind)
    if kind == "string":
        limit = schema.get("maxLength")
        return 3 + (limit * per_char if limit is not None else UNBOUNDED_STRING_TOKENS)
    if kind == "array":
        count = schema.get("maxItems", 8)
        return 4 + count * (3 + _tokens(schema.get("items", {}), per_char))
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return 4 + sum(6 + len(name) // 2 + _tokens(sub, per_char) for name, sub in props.items())
    return 6  # numbers, booleans, null
