"""Generate a valid instance of a JSON schema with a seeded RNG (and deliberately invalid ones).

Covers what ``msgspec.json.schema`` + our strict fix-up emit: types (also type lists), enum,
const, anyOf/oneOf/allOf, $ref into $defs/definitions, numeric bounds (inclusive, exclusive,
multipleOf), string lengths and common formats, array item counts (items, prefixItems,
uniqueItems), objects with properties/required and map-like additionalProperties.

Beyond validity, answers are as realistic as a schema allows, by generic rules (no stage is
known here), so a consumer's semantic checks see what a sensible model would send:

- **ids**: a free string property named ``id`` or ending in ``_id``/``Id`` gets a fresh slug
  (``sim-3f9a0c1d``), unique in practice, never a random phrase two fields might share; id
  properties of one object drawn from enums (``fromAgentId``, ``toAgentId``) take different
  values when their enums allow it, as a model told "from and to differ" would (a schema cannot
  say that across two fields);
- **quotes**: a free string property whose name contains ``quote`` or ``evidence`` gets a span
  copied verbatim from the request's source text (the last line of its longest user message,
  where the text under judgement usually is), cut to the property's ``maxLength``;
- **lists cover their options**: an ``enum`` drawn again inside one list (the list's own items,
  or the same field of each object item) takes values without replacement until all were used,
  so five goals are not all ``main`` and two progress claims do not name the same line; free
  strings in one list differ (ignoring case, spacing and punctuation) when the schema allows;
- a list never exceeds its ``maxItems``, even when that is 0 (an empty choice of ids).
"""

from __future__ import annotations

import math
import random
import re
import uuid
from typing import Any

from app.llm.simulator.language import simulated_string

MAX_DEPTH = 8
_FORMATS = {
    "date-time": lambda r: f"2024-0{r.randint(1, 9)}-1{r.randint(0, 9)}T12:00:00Z",
    "date": lambda r: f"2024-0{r.randint(1, 9)}-1{r.randint(0, 9)}",
    "time": lambda r: f"1{r.randint(0, 9)}:30:00",
    "uuid": lambda r: str(uuid.UUID(int=r.getrandbits(128), version=4)),
    "email": lambda r: f"simulated{r.randint(1, 999)}@example.com",
    "uri": lambda r: f"https://example.com/simulated/{r.randint(1, 999)}",
    "duration": lambda r: f"PT{r.randint(1, 59)}S",
}


def _norm(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


_ID_NAME = re.compile(r"(^id$|_id$|[a-z]Id$)")
_QUOTE_NAME = re.compile(r"quote|evidence", re.IGNORECASE)
_MIN_QUOTE = 4


class InstanceGenerator:
    def __init__(self, root: dict[str, Any], rng: random.Random, language: str = "en", source_text: str = "") -> None:
        self.root = root
        self.rng = rng
        self.language = language
        self.source_lines = [line.strip() for line in source_text.splitlines() if len(line.strip()) >= _MIN_QUOTE]
        self._field: str | None = None  # the property whose value is being generated
        self._bags: list[dict[int, list[Any]]] = []  # per open list: enum values not used yet
        self._ids: list[list[Any]] = []  # per open object: values its id properties took

    def generate(self, schema: dict[str, Any] | None = None, depth: int = 0) -> Any:
        schema = self.root if schema is None else schema
        if "$ref" in schema:
            return self.generate(self._resolve(schema["$ref"]), depth + 1)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self._enum(schema)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = schema[key]
                if depth >= MAX_DEPTH:  # prefer a terminating branch (null) deep in recursive schemas
                    options = [o for o in options if o.get("type") == "null"] or options
                return self.generate(self.rng.choice(options), depth + 1)
        if "allOf" in schema:
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                merged.update(self._resolve(part["$ref"]) if "$ref" in part else part)
            return self.generate(merged, depth + 1)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = "null" if depth >= MAX_DEPTH and "null" in kind else self.rng.choice(kind)
        if kind is None:
            kind = "object" if "properties" in schema else "string"
        return getattr(self, f"_{kind}")(schema, depth)

    def _enum(self, schema: dict[str, Any]) -> Any:
        values = schema["enum"]
        taken = self._ids[-1] if self._ids and self._field and _ID_NAME.search(self._field) else None
        fresh = lambda v: taken is None or v not in taken  # noqa: E731
        if not self._bags or not values:
            value = self.rng.choice([v for v in values if fresh(v)] or values)
        else:
            bag = self._bags[-1].setdefault(id(schema), [])
            if not bag:
                bag.extend(values)
                self.rng.shuffle(bag)
            value = bag.pop(next((i for i in reversed(range(len(bag))) if fresh(bag[i])), len(bag) - 1))
        if taken is not None:
            taken.append(value)
        return value

    def _resolve(self, ref: str) -> dict[str, Any]:
        if not ref.startswith("#"):
            raise ValueError(f"only local $ref is supported, got {ref!r}")
        node: Any = self.root
        for part in ref.lstrip("#/").split("/") if ref != "#" else []:
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def _null(self, schema: dict[str, Any], depth: int) -> None:
        return None

    def _boolean(self, schema: dict[str, Any], depth: int) -> bool:
        return self.rng.random() < 0.5

    def _integer(self, schema: dict[str, Any], depth: int) -> int:
        lo = schema.get("minimum", -math.inf)
        hi = schema.get("maximum", math.inf)
        if "exclusiveMinimum" in schema:
            lo = max(lo, math.floor(schema["exclusiveMinimum"]) + 1)
        if "exclusiveMaximum" in schema:
            hi = min(hi, math.ceil(schema["exclusiveMaximum"]) - 1)
        lo = math.ceil(lo) if lo != -math.inf else (0 if hi == math.inf or hi >= 0 else int(hi) - 100)
        hi = math.floor(hi) if hi != math.inf else lo + 100
        step = schema.get("multipleOf")
        if step:
            first = math.ceil(lo / step) * step
            count = max(0, int((hi - first) // step))
            return int(first + step * self.rng.randint(0, count))
        return self.rng.randint(int(lo), int(hi))

    def _number(self, schema: dict[str, Any], depth: int) -> float | int:
        if schema.get("multipleOf"):
            return self._integer(schema, depth)
        lo = schema.get("minimum", schema.get("exclusiveMinimum"))
        hi = schema.get("maximum", schema.get("exclusiveMaximum"))
        lo = float(lo) if lo is not None else (min(0.0, hi - 100.0) if hi is not None else 0.0)
        hi = float(hi) if hi is not None else lo + 100.0
        value = round(self.rng.uniform(lo, hi), 3)
        if value <= lo and "exclusiveMinimum" in schema or value >= hi and "exclusiveMaximum" in schema or not lo <= value <= hi:
            value = (lo + hi) / 2
        return value

    def _string(self, schema: dict[str, Any], depth: int) -> str:
        fmt = schema.get("format")
        if fmt in _FORMATS:
            return _FORMATS[fmt](self.rng)
        lo, hi = schema.get("minLength", 0), schema.get("maxLength")
        name = self._field or ""
        if _ID_NAME.search(name) and "pattern" not in schema:
            slug = f"sim-{self.rng.getrandbits(32):08x}"
            if lo <= len(slug) <= (hi if hi is not None else len(slug)):
                return slug
        if _QUOTE_NAME.search(name) and self.source_lines:
            quote = self._quote(lo, hi)
            if quote is not None:
                return quote
        return simulated_string(self.rng, self.language, lo, hi)

    def _quote(self, lo: int, hi: int | None) -> str | None:
        """A verbatim span of the source's last line, as long as the schema allows (up to 40 characters)."""
        line = self.source_lines[-1]
        longest = min(len(line), hi if hi is not None else len(line), max(lo, 40))
        if longest < max(lo, _MIN_QUOTE):
            return None
        size = self.rng.randint(max(lo, _MIN_QUOTE, longest // 2), longest)
        start = self.rng.randint(0, len(line) - size)
        span = line[start : start + size]
        stripped = span.strip()
        return stripped if len(stripped) >= max(lo, _MIN_QUOTE) else span

    def _array(self, schema: dict[str, Any], depth: int) -> list[Any]:
        self._bags.append({})
        try:
            return self._items(schema, depth)
        finally:
            self._bags.pop()

    def _items(self, schema: dict[str, Any], depth: int) -> list[Any]:
        prefix = schema.get("prefixItems", [])
        lo = schema.get("minItems", 0 if depth >= MAX_DEPTH else 1)
        hi = schema.get("maxItems", max(lo, len(prefix), 3))
        if depth >= MAX_DEPTH:
            hi = max(lo, len(prefix))
        lo = min(lo, hi)  # maxItems 0: an empty list, whatever the default minimum
        count = self.rng.randint(lo, max(lo, hi))
        items: list[Any] = [self.generate(p, depth + 1) for p in prefix[:count]]
        item_schema = schema.get("items", {} if not prefix else None)
        tries = 0
        while len(items) < count and item_schema is not None and item_schema is not False:
            item = self.generate(item_schema, depth + 1)
            tries += 1
            if schema.get("uniqueItems") and item in items and tries < 50:
                continue
            if isinstance(item, str) and _norm(item) in {_norm(i) for i in items if isinstance(i, str)} and tries < 20:
                continue  # free texts in one list differ, as a model's options do
            items.append(item)
        return items

    def _object(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        props: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        out = {}
        outer = self._field
        self._ids.append([])
        try:
            for name, sub in props.items():
                if name in required or (depth < MAX_DEPTH and self.rng.random() < 0.5):
                    self._field = name
                    out[name] = self.generate(sub, depth + 1)
        finally:
            self._field = outer
            self._ids.pop()
        extra = schema.get("additionalProperties")
        if not props and isinstance(extra, dict):  # a map: dict[str, X]
            lo = schema.get("minProperties", 0)
            for i in range(self.rng.randint(lo, max(lo, 2 if depth < MAX_DEPTH else 0))):
                out[f"{simulated_string(self.rng, 'en', 3, 12)}{i}"] = self.generate(extra, depth + 1)
        return out


def generate_instance(schema: dict[str, Any], rng: random.Random, language: str = "en", source_text: str = "") -> Any:
    """``source_text``: what quotes are copied from (the request's text under judgement)."""
    return InstanceGenerator(schema, rng, language, source_text).generate()


def violate(instance: Any, schema: dict[str, Any]) -> Any:
    """A schema-violating variant: wrong type for one field plus an unknown field (or wrong root type)."""
    if isinstance(instance, dict):
        broken = dict(instance)
        if broken:
            first = next(iter(broken))
            broken[first] = [] if isinstance(broken[first], str) else "simulated-violation"
        broken["simulatorViolation"] = True
        return broken
    if isinstance(instance, str):
        return {"simulatorViolation": True}
    return "simulated-violation"
