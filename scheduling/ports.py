"""The model port as this library sees it.

``scheduling`` never imports ``app``: the app's gateway only reads these attribute names, so
the Structs below are structural mirrors of ``app.llm.port`` and are accepted as they are.
The library itself rarely calls a model; it builds requests and validates answers, and the
app runs the call (with its repair budget and fallbacks).
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
    purpose: str
    response_schema: ResponseSchema | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    timeout_s: float | None = None
    model_config_id: str | None = None


class Usage(msgspec.Struct, frozen=True):
    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False


class ModelResult(msgspec.Struct, frozen=True):
    text: str
    usage: Usage
    model: str
    finish_reason: str | None = None
    first_token_ms: float | None = None
    retries: int = 0  # attempts the host repeated after a transient error


class UsageLike(Protocol):
    input_tokens: int
    output_tokens: int
    estimated: bool


class ModelResultLike(Protocol):
    text: str
    usage: UsageLike
    model: str
    finish_reason: str | None


class ChatModel(Protocol):
    async def complete(self, request: ModelRequest) -> ModelResultLike: ...
