"""Every error ``code`` the code base can emit is a public snake_case name in the README's table.

The codes are collected from the source (no import side effects): class attributes ``code = "…"``,
``code="…"`` keyword arguments, ``{"code": "…"}`` literals, any string assigned to a variable named
``code``, and the HTTP status → code map of the exception handler (``_HTTP_CODES``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SOURCES = ("app", "analytics", "story", "scheduling")
SKIP_PARTS = {"simulator"}  # the fake LLM server speaks the provider's error format, not ours
SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")


def _strings(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _is_code_name(target: ast.AST) -> bool:
    names = [t for t in ast.walk(target) if isinstance(t, ast.Name)]
    return any(n.id in ("code", "_HTTP_CODES") for n in names)


def emitted_codes() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for source in SOURCES:
        for path in (ROOT / source).rglob("*.py"):
            if SKIP_PARTS & set(path.parts):
                continue
            where = str(path.relative_to(ROOT))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                values: set[str] = set()
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if any(_is_code_name(t) for t in targets):
                        if isinstance(node.value, ast.Dict):
                            values = {v.value for v in node.value.values if isinstance(v, ast.Constant)}
                        else:
                            values = _strings(node.value)
                elif isinstance(node, ast.Call):
                    values = {kw.value.value for kw in node.keywords
                              if kw.arg == "code" and isinstance(kw.value, ast.Constant)}  # fmt: skip
                elif isinstance(node, ast.Dict):
                    values = {v.value for k, v in zip(node.keys, node.values, strict=True)
                              if isinstance(k, ast.Constant) and k.value == "code" and isinstance(v, ast.Constant)}  # fmt: skip
                for value in values:
                    if isinstance(value, str):
                        found.setdefault(value, set()).add(where)
    return found


def documented_codes() -> set[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Errors", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {code for row in rows for code in re.findall(r"`([^`]+)`", row.split("|")[1])}


def test_the_collector_finds_codes_of_every_kind() -> None:
    codes = emitted_codes()
    assert {"turn_in_progress", "invalid_json", "method_not_allowed", "turn_abandoned", "invalid_token"} <= set(codes)


def test_every_emitted_code_is_public_snake_case() -> None:
    bad = {c: sorted(w) for c, w in emitted_codes().items() if not SNAKE.match(c)}
    assert not bad, f"error codes must be snake_case public names: {bad}"


def test_every_emitted_code_is_in_the_readme_error_table() -> None:
    missing = {c: sorted(w) for c, w in emitted_codes().items() if c not in documented_codes()}
    assert not missing, f"add these codes to the README's error table: {missing}"


def test_the_readme_table_lists_no_code_that_cannot_occur() -> None:
    stale = documented_codes() - set(emitted_codes())
    assert not stale, f"the README's error table lists codes nothing emits: {sorted(stale)}"


def test_an_unexpected_exception_is_recorded_as_internal_error_not_its_class_name() -> None:
    from app.turns.stages import error_record

    class _AllRepliesFailed(Exception):
        pass

    record = error_record(_AllRepliesFailed("boom"))
    assert record["code"] == "internal_error" and "_AllRepliesFailed" in record["message"]
