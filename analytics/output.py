"""Render query rows as a text table, JSON (camelCase, like the HTTP API) or CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

import msgspec

from analytics.queries import Row

FORMATS = ("table", "json", "csv")


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e6 else f"{value:.0f}"
    return str(value)


def render(rows: Sequence[Row], row_type: type[Row], fmt: str) -> str:
    fields = row_type.__struct_fields__
    if fmt == "json":
        return msgspec.json.format(msgspec.json.encode(list(rows)), indent=2).decode()
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(fields)
        writer.writerows([["" if v is None else v for v in msgspec.structs.astuple(r)] for r in rows])
        return buf.getvalue().rstrip("\n")
    cells = [[_text(v) for v in msgspec.structs.astuple(r)] for r in rows]
    widths = [max([len(f)] + [len(c[i]) for c in cells]) for i, f in enumerate(fields)]
    lines = ["  ".join(f.ljust(w) for f, w in zip(fields, widths, strict=True)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    if not rows:
        lines.append("(no rows)")
    return "\n".join(lines)
