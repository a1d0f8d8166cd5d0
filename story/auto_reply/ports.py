"""The model port as this library sees it.

Declared structurally (same field names as the app's port) so that ``story`` never imports
``app``: the app's gateway reads only these attribute names, and any object whose
``complete`` returns something with ``.text``/``.usage``/``.model``/``.finish_reason`` can
drive the generator — the real adapter, a scripted fake, or another host's client.
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec

PURPOSE = "auto_reply"


class ChatMessage(msgspec.Struct, frozen=True):
    role: str  # "system" | "user" | "assistant"
    content: str


class ResponseSchema(msgspec.Struct, frozen=True):
    name: str
    schema: dict[str, Any]


class ModelRequest(msgspec.Struct, frozen=True):
    messages: list[ChatMessage]
    purpose: str
    response_schema: ResponseSchema | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    timeout_s: float | None = None
    model_config_id: str | None = None


class UsageLike(Protocol):
    input_tokens: int
    output_tokens: int
    estimated: bool


class ResultLike(Protocol):
    text: str
    usage: UsageLike | None
    model: str
    finish_reason: str | None


class ChatModel(Protocol):
    async def complete(self, request: ModelRequest) -> ResultLike: ...
