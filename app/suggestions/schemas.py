"""API shapes of suggestions. Options are only shown for a ``ready`` record: a cleared, failed or
still-generating record never carries options a client could mistake for current ones."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from msgspec import Meta

from app.api.schemas import ApiInput, ApiStruct
from app.db.models import Suggestion


class SuggestionCreated(ApiStruct):
    """``POST .../suggestions``: the issue's response shape."""

    suggestion_id: str
    anchor_message_id: str
    options: list[str]
    usage: dict[str, Any]
    fallback: bool


class SuggestionOut(ApiStruct):
    """One suggestion record (``GET .../suggestions/latest``, turn results, SSE events)."""

    suggestion_id: str
    conversation_id: str
    anchor_message_id: str
    turn_id: str | None
    status: str  # generating | ready | failed | cleared
    options: list[str]
    fallback: bool
    attempts: int
    usage: dict[str, Any]
    model: str | None
    problems: list[Any]
    created_at: datetime
    updated_at: datetime


def to_out(row: Suggestion) -> SuggestionOut:
    ready = row.status == "ready"
    return SuggestionOut(
        suggestion_id=row.id, conversation_id=row.conversation_id, anchor_message_id=row.anchor_message_id,
        turn_id=row.turn_id, status=row.status, options=list(row.options or []) if ready else [],
        fallback=bool(row.fallback) and ready, attempts=row.attempts, usage=row.usage or {}, model=row.model,
        problems=list(row.problems or []), created_at=row.created_at, updated_at=row.updated_at,
    )  # fmt: skip


def to_created(row: Suggestion) -> SuggestionCreated:
    return SuggestionCreated(
        suggestion_id=row.id, anchor_message_id=row.anchor_message_id, options=list(row.options or []),
        usage=row.usage or {}, fallback=bool(row.fallback),
    )  # fmt: skip


class ImpersonateIn(ApiInput):
    """``POST …/impersonate``: ``draft`` is what the user has typed so far (may be empty)."""

    draft: Annotated[str, Meta(max_length=2000)] = ""


class ImpersonateOut(ApiStruct):
    """One line for the user to send or not: ``text`` (the draft included at its start); each
    attempt's problems (the last is empty: accepted); never stored."""

    text: str
    draft: str
    attempts: list[list[str]]
    model: str | None
    usage: dict[str, Any]
