"""The model port as this library sees it: the Story package's own structural port.

``story`` never imports ``app``: the app's gateway reads only these attribute names, and any
object whose ``complete`` returns something with ``.text``/``.usage``/``.model``/``.finish_reason``
can drive the generator — the real adapter, a scripted fake, or another host's client.
"""

from __future__ import annotations

from story.ports import ChatMessage, ChatModel, ModelRequest, ResponseSchema, UsageLike
from story.ports import ModelResultLike as ResultLike

PURPOSE = "auto_reply"

__all__ = ["PURPOSE", "ChatMessage", "ChatModel", "ModelRequest", "ResponseSchema", "ResultLike", "UsageLike"]
