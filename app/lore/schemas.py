"""Lore API shapes (issue 28). Lengths and counts are bounded by ``Limits`` in the service (named
settings); here only what no setting changes."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, UnsetType

from app.api.schemas import ApiInput, ApiStruct

Priority = Annotated[int, Meta(ge=-1000, le=1000)]
Keys = list[str]  # bounded by Limits.max_lore_keys and max_lore_key_chars
AgentIds = Annotated[list[Annotated[str, Meta(min_length=1, max_length=32)]], Meta(max_length=64)]


class LoreCreate(ApiInput):
    keys: Keys
    content: str
    secondary_keys: Keys = msgspec.field(default_factory=list)  # when set, one of them must appear too
    priority: Priority = 0  # higher first
    enabled: bool = True
    member_ids: AgentIds | None = None  # a conversation's entry: only these members' replies (None: all)


class LoreUpdate(ApiInput):
    keys: Keys | UnsetType = UNSET
    content: str | UnsetType = UNSET
    secondary_keys: Keys | UnsetType = UNSET
    priority: Priority | UnsetType = UNSET
    enabled: bool | UnsetType = UNSET
    member_ids: AgentIds | None | UnsetType = UNSET


class LoreOut(ApiStruct):
    id: str
    conversation_id: str | None
    agent_id: str | None
    keys: list[str]
    secondary_keys: list[str]
    content: str
    priority: int
    enabled: bool
    member_ids: list[str] | None
    created_at: datetime
    updated_at: datetime
