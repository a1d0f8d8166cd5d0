"""JSON schemas for structured LLM output, generated from the Structs that decode it.

Strict structured-output modes want: no root ``$ref``, every property required, no
``default`` keys, ``additionalProperties: false``. Generating from the Struct keeps the
schema and the decoder from drifting apart; the fix-up is idempotent, so the app may apply
its own again.
"""

from __future__ import annotations

from typing import Any

import msgspec

from scheduling.ports import ResponseSchema


def _fix(node: Any) -> Any:
    if isinstance(node, dict):
        fixed = {k: _fix(v) for k, v in node.items() if k != "default"}
        if fixed.get("type") == "object" and "properties" in fixed:
            fixed["required"] = list(fixed["properties"])
            fixed["additionalProperties"] = False
        return fixed
    if isinstance(node, list):
        return [_fix(v) for v in node]
    return node


def strict_json_schema(struct_type: type) -> dict[str, Any]:
    """Schema of ``struct_type`` with the root ``$ref`` inlined and strict-mode rules applied."""
    raw = msgspec.json.schema(struct_type)
    defs = raw.get("$defs", {})
    ref = raw.get("$ref", "")
    root = dict(defs.get(ref.rsplit("/", 1)[-1], raw)) if ref else dict(raw)
    root.pop("description", None)  # developer docstrings are not instructions for the model
    others = {k: v for k, v in defs.items() if f"#/$defs/{k}" != ref}
    if others:
        root["$defs"] = others
    return _fix(root)


def response_schema(struct_type: type, name: str) -> ResponseSchema:
    return ResponseSchema(name=name, schema=strict_json_schema(struct_type))
