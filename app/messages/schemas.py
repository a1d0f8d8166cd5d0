"""Message API shapes."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from msgspec import Meta

from app.api.schemas import ApiInput, ApiStruct


class MessageCreate(ApiInput):
    content: str


class MessageEdit(ApiInput):
    content: str


class MessageOut(ApiStruct):
    id: str
    conversation_id: str
    turn_id: str | None
    seq: int
    role: str
    agent_id: str | None
    content: str
    content_hash: str
    reply_kind: str | None
    respond_to_agent_id: str | None
    metadata: dict[str, Any]
    created_at: datetime
    edited_at: datetime | None
    selected_version: int | None = None  # null: never regenerated (one version)
    present_agent_ids: list[str] | None = None  # the members present when it was saved (null: before presence)


class VersionSelect(ApiInput):
    version: Annotated[int, Meta(ge=1, le=1000)]


class MessageVersionOut(ApiStruct):
    number: int
    content: str
    content_hash: str
    model: str | None
    reason: str  # original | regenerate
    metadata: dict[str, Any]
    created_at: datetime
    selected: bool


class MessageVersions(ApiStruct):
    message_id: str
    selected: int
    items: list[MessageVersionOut]


class MessagePage(ApiStruct):
    items: list[MessageOut]
    next_cursor: int | None
    order: str


class HiddenMessageOut(MessageOut):
    """A message a rewind removed: kept, with when and by which rewind (``rewindId``)."""

    hidden_at: datetime | None = None
    hidden_by: str | None = None


class HiddenPage(ApiStruct):
    items: list[HiddenMessageOut]
    next_cursor: int | None  # newest first: pass as ``before``
