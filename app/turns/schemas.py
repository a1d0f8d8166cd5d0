"""Turn API shapes."""

from __future__ import annotations

from typing import Annotated, Any

from msgspec import Meta

from app.api.schemas import ApiInput, ApiStruct
from app.messages.schemas import MessageOut


class TurnCreate(ApiInput):
    content: str
    idempotency_key: Annotated[str, Meta(min_length=1, max_length=128)] | None = None


class TurnOut(ApiStruct):
    turn_id: str
    status: str
    user_message: MessageOut | None
    agent_messages: list[MessageOut]
    orchestration: dict[str, Any]
    suggestions: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
