"""The model port as this library sees it: the Story package's own structural port.

``story`` never imports ``app``. The generator asks the host's one structured path for a
``SuggestionOptions`` (``complete_struct``): the library passes the Struct type, its per-request
bounds, its check and its repair note; the host builds the wire schema, decodes, checks and
repairs. Any object with a matching ``complete_struct`` coroutine can drive the generator —
the app's gateway, a text-level fake joined to that path, or another host's client.
"""

from __future__ import annotations

from story.ports import (
    ChatMessage, ChatModel, ModelRequest, ResponseSchema, StructuredModel, StructuredResultLike, UsageLike,
)
from story.ports import ModelResultLike as ResultLike

PURPOSE = "auto_reply"

__all__ = [
    "PURPOSE", "ChatMessage", "ChatModel", "ModelRequest", "ResponseSchema", "ResultLike",
    "StructuredModel", "StructuredResultLike", "UsageLike",
]
