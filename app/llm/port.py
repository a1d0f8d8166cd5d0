"""The model port: the one narrow interface between the app and any language model.

Libraries (``scheduling``, ``story``) declare the same shape structurally in their own
``ports.py`` (no import of this module); the gateway only reads these attribute names, so a
library's own request Struct with the same fields is accepted as is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
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
    # OpenAI's penalties on tokens already in the context (llama.cpp counts the prompt's tail too):
    # a retry of a reply that copied a message sets them, so the copy is no longer the likeliest text.
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
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
    first_token_ms: float | None = None  # request start → first non-empty delta; None when not streamed
    retries: int = 0  # attempts repeated after a transient error (app.llm.retry)


OnDelta = Callable[[str], Awaitable[None]]


class ChatModel(Protocol):
    async def complete(self, request: ModelRequest) -> ModelResult: ...


class StreamingChatModel(ChatModel, Protocol):
    async def stream(self, request: ModelRequest, on_delta: OnDelta) -> ModelResult:
        """Call ``on_delta(piece)`` for each piece of text as it arrives (never with ``""``), then
        return the same ``ModelResult`` that ``complete`` would, plus ``first_token_ms``."""
        ...


async def stream_or_complete(model: Any, request: Any, on_delta: OnDelta) -> ModelResult:
    """``model.stream`` when the model has it; else ``complete`` and the whole text as one delta."""
    stream = getattr(model, "stream", None)
    if callable(stream):
        return await stream(request, on_delta)
    result = await model.complete(request)
    if result.text:
        await on_delta(result.text)
    return result
