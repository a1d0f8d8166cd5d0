"""Message API shapes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

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


class MessagePage(ApiStruct):
    items: list[MessageOut]
    next_cursor: int | None
    order: str
