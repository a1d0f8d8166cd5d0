"""Base Structs for the HTTP API: camelCase JSON on the wire, snake_case in Python."""

from __future__ import annotations

from typing import Any

import msgspec


class ApiStruct(msgspec.Struct, rename="camel", kw_only=True):
    """Response shapes."""


class ApiInput(msgspec.Struct, rename="camel", kw_only=True, forbid_unknown_fields=True):
    """Request bodies: unknown keys are rejected, so typos never pass silently."""


class ErrorBody(ApiStruct, omit_defaults=True):
    code: str
    message: str
    details: dict[str, Any] | None = None
    retryable: bool | None = None


class Page(ApiStruct):
    items: list[Any]
    next_cursor: int | None = None
