"""The model port as this library sees it: the Story package's own structural port.

``story`` never imports ``app``. The generator asks the host's one structured path for a
``SuggestionOptions`` (``complete_struct``): the library passes the Struct type, its per-request
bounds, its check and its repair note; the host builds the wire schema, decodes, checks and
repairs. Any object with a matching ``complete_struct`` coroutine can drive the generator —
the app's gateway, a text-level fake joined to that path, or another host's client.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol

from story.ports import ChatMessage, ChatModel, ModelRequest, ResponseSchema, StructuredResultLike, UsageLike
from story.ports import ModelResultLike as ResultLike

PURPOSE = "auto_reply"


class StructuredModel(Protocol):
    """The host's structured path. Raises, once the repair budget is spent, an error carrying
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


__all__ = [
    "PURPOSE", "ChatMessage", "ChatModel", "ModelRequest", "ResponseSchema", "ResultLike",
    "StructuredModel", "StructuredResultLike", "UsageLike",
]
