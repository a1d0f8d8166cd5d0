"""Conversation API shapes."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from app.api.schemas import ApiInput, ApiStruct

Title = str  # bounded by Limits.max_title_chars in the service (a named setting)


class ConversationCreate(ApiInput):
    kind: Literal["group", "direct"]
    agent_ids: Annotated[list[str], Meta(min_length=1, max_length=64)]
    title: Title = ""
    settings: dict[str, Any] | None = None


class ConversationUpdate(ApiInput):
    title: Title | UnsetType = UNSET
    settings: dict[str, Any] | UnsetType = UNSET


class MemberAdd(ApiInput):
    agent_id: str


class RewindIn(ApiInput):
    to_message_id: Annotated[str, Meta(min_length=1, max_length=64)]


class MemberUpdate(ApiInput):
    muted: bool


class MemberOut(ApiStruct):
    agent_id: str
    name: str
    display_order: int
    muted: bool = False  # chosen only when named or asked to speak
    joined_seq: int = 0  # the conversation's last seq when it joined (0: from the start); presence


class ConversationOut(ApiStruct):
    id: str
    kind: str
    title: str
    members: list[MemberOut]
    settings: dict[str, Any]
    message_count: int
    last_message_at_ms: int | None
    version: int
    created_at: datetime
    updated_at: datetime
    created: bool = msgspec.field(default=True)
    # GET /v1/conversations/{id} only: the turn running now (a user's, a Continue, auto mode's), so a
    # client that opens the conversation mid-turn can replay it (…/events?turnId=&after=0) even
    # before the turn has saved a message; null when none runs.
    running_turn_id: str | None = None
