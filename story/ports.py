"""The narrow ports the Story library needs from its host.

Declared structurally here (never imported from ``app``) so the library stays usable by any
host: the app's gateway reads exactly these attribute names, so a ``ModelRequest`` built here
is accepted as is, and any object with a matching ``complete`` coroutine is a model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
    purpose: str  # "story.prepare", "story.advance", "story.plan_cycle", "story.settle", ...
    response_schema: ResponseSchema | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    timeout_s: float | None = None
    model_config_id: str | None = None


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
    """Anything that completes a request; every exception but cancellation is a model failure."""

    async def complete(self, request: ModelRequest) -> ModelResultLike: ...


class StructuredResultLike(Protocol):
    value: Any
    usage: UsageLike
    attempts: list[Any]  # each with ``problem`` (None for the accepted one)


class StructuredModel(ChatModel, Protocol):
    """A model with the host's one structured path: the library passes the Struct type, its
    per-request constraints (ids as ``enum``s, ``maxItems``, ``maxLength``), its check, an optional
    stage-specific repair note and its repair budget; the host builds the wire schema, decodes,
    runs ``validate`` and repairs. When the budget is spent it raises an error carrying
    ``problems`` (one per response), ``usage`` and ``diagnostics`` (each attempt's ``problem``,
    ``ms``, ``finish_reason``); any other exception is a model failure (timeout, unavailable)."""

    async def complete_struct(
        self,
        request: ModelRequest,
        output_type: type,
        *,
        constraints: Mapping[str, Mapping[str, Any]] | None = None,
        repairs: int = 1,
        validate: Callable[[Any], list[str]] | None = None,
        repair_note: Callable[[list[str]], str | None] | None = None,
        schema_name: str | None = None,
    ) -> StructuredResultLike: ...


class SavedMessage(msgspec.Struct, frozen=True):
    """A chat message as the host's database holds it now (it may have been edited)."""

    message_id: str
    content: str
    agent_id: str | None = None
    deleted: bool = False


class MessageReader(Protocol):
    """Reads saved messages by id, so settlement uses the authoritative text, not a draft."""

    async def read(self, message_ids: list[str]) -> dict[str, SavedMessage]: ...
