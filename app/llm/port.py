"""The model port: the one narrow interface between the app and any language model.

Libraries (``scheduling``, ``story``) declare the same shape structurally in their own
``ports.py`` (no import of this module); the gateway only reads these attribute names, so a
library's own request Struct with the same fields is accepted as is.
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec


class ChatMessage(msgspec.Struct, frozen=True):
    role: str  # "system" | "user" | "assistant"
    content: str


class ResponseSchema(msgspec.Struct, frozen=True):
    name: str
    schema: dict[str, Any]


class ModelRequest(msgspec.Struct, frozen=True):
    messages: list[ChatMessage]
    purpose: str  # stage name, e.g. "emotion", "select", "actor", "story.plan_cycle", "auto_reply"
    response_schema: ResponseSchema | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    timeout_s: float | None = None
    model_config_id: str | None = None  # explicit model config; else the stage map decides


class Usage(msgspec.Struct, frozen=True):
    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False


class ModelResult(msgspec.Struct, frozen=True):
    text: str
    usage: Usage
    model: str
    finish_reason: str | None = None


class ChatModel(Protocol):
    async def complete(self, request: ModelRequest) -> ModelResult: ...
