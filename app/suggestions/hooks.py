"""The suggestions feature inside a turn (a ``TurnPlugin``, see app/turns/plugins.py).

``user_message_stored`` makes earlier suggestions non-current in the very transaction that stores a
new user message; ``turn_starting`` then cancels this process's generations.
``turn_finished`` runs after the turn completed and released its lock: it generates suggestions
for the turn's last agent message and waits a bounded time so a fast result rides along in the
JSON response and the SSE stream (after ``turn.completed``); a slow one finishes in the
background and is fetched by its ``suggestionId``. A suggestion problem never fails a turn.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import msgspec
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Conversation, Message
from app.errors import AppError, ModelNotConfigured
from app.suggestions.context import config_of, hint, prepare
from app.suggestions import repository
from app.suggestions.service import Emit, SuggestionService
from app.turns.plugins import TurnInfo, TurnPlugin
from app.turns.stages import model_configured
from story.auto_reply import Guidance

log = logging.getLogger("app.suggestions")


class SuggestionHooks(TurnPlugin):
    # Upper bound on how long a turn response waits for its suggestions; the generation's own
    # per-call timeout (``timeoutMs``) is used when it is shorter.
    max_turn_wait_s: float = 15.0

    def __init__(self, service: SuggestionService) -> None:
        self.service = service

    async def user_message_stored(self, session: AsyncSession, conversation_id: str) -> None:
        await repository.clear_open(session, conversation_id)

    async def turn_starting(self, conversation_id: str) -> None:
        self.service.cancel_running(conversation_id)

    async def history_rewound(self, session: AsyncSession, conversation_id: str, *, to_message_id: str, to_seq: int,
                              by: str) -> dict[str, Any]:  # fmt: skip
        self.service.cancel_running(conversation_id)
        return {"suggestionsCleared": await repository.clear_open(session, conversation_id)}

    async def turn_finished(self, info: TurnInfo, messages: list[Message], emit: Emit) -> dict[str, Any] | None:
        config = config_of(info.settings)
        anchor = next((m for m in reversed(messages) if m.role == "agent"), None)
        if not config.enabled or anchor is None:
            return None  # disabled: no row, no event, no model call
        try:
            if not model_configured(self.service.model, "auto_reply"):
                raise ModelNotConfigured("auto_reply")
            guidance = Guidance(emotion=hint(_plain(info.emotion)), intent=hint(_plain(info.intent)))
            async with self.service.sessions() as session:
                conv = await session.get(Conversation, info.conversation_id)
                prepared = await prepare(session, conv, anchor.id, guidance=guidance)
            suggestion_id, task = await self.service.start(prepared, emit, metric_turn_id=info.turn_id)
        except Exception as exc:  # noqa: BLE001 - reported as a failed suggestion, the turn stands
            if not isinstance(exc, AppError):
                log.exception("suggestions for turn %s could not start", info.turn_id)
                exc = AppError(f"suggestions could not start: {type(exc).__name__}")
            failed = {"anchorMessageId": anchor.id, "status": "failed", "code": exc.code, "message": exc.message}
            await emit("suggestions.failed", failed)
            return {"suggestions": failed}
        await asyncio.wait({task}, timeout=min(config.timeout_s, self.max_turn_wait_s))
        if task.done() and not task.cancelled() and task.exception() is None:
            return {"suggestions": task.result().payload()}
        if task.done():  # crashed (logged by the service) or cancelled: not current, never ready
            return {"suggestions": {"suggestionId": suggestion_id, "anchorMessageId": anchor.id, "status": "failed"}}
        return {"suggestions": {"suggestionId": suggestion_id, "anchorMessageId": anchor.id, "status": "generating"}}


def _plain(value: Any) -> Any:
    return msgspec.to_builtins(value) if value is not None else None
