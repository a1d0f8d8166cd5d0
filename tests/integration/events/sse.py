"""Parse a Server-Sent Events body into events (id, event, data) like a browser would."""

from __future__ import annotations

import json
from typing import Any


def parse(body: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        item: dict[str, Any] = {}
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "id":
                item["id"] = int(value)
            elif field == "event":
                item["event"] = value
            elif field == "data":
                item["data"] = json.loads(value)
        if item:
            out.append(item)
    return out
