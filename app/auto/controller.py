"""``/v1/conversations/{id}/auto``: start (``POST {turns, delayMs}``), stop (``DELETE``) and read
(``GET``) auto mode. Thin: the rules are in ``repository``, ``runner`` and ``service``."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from litestar import Controller, delete, get, post
from litestar.datastructures import State
from msgspec import Meta
from sqlalchemy.ext.asyncio import AsyncSession

from app.api.schemas import ApiInput, ApiStruct
from app.auth.tokens import Principal
from app.auto import repository as runs
from app.auto import service
from app.auto.runner import announce
from app.conversations.service import get_owned
from app.db.models import AutoRun
from app.errors import ModelNotConfigured, ValidationFailed
from app.turns import loader
from app.turns.stages import model_configured

MAX_DELAY_MS = 60_000


class AutoStart(ApiInput):
    turns: Annotated[int, Meta(ge=1)]  # at most COMPANION_MAX_AUTO_TURNS (422 auto_turns_over_limit)
    delay_ms: Annotated[int, Meta(ge=0, le=MAX_DELAY_MS)] = 0


class AutoRunOut(ApiStruct):
    run_id: str
    conversation_id: str
    status: str  # running | completed | stopped | interrupted | failed
    turns: int
    turns_done: int
    delay_ms: int
    started_at: datetime
    deadline_at: datetime
    ended_at: datetime | None
    reason: str | None  # why it ended; while running, the stop asked for (if any)
    stopping: bool
    last_turn_id: str | None

    @classmethod
    def of(cls, run: AutoRun) -> AutoRunOut:
        return cls(run_id=run.id, conversation_id=run.conversation_id, status=run.status, turns=run.turns,
                   turns_done=run.turns_done, delay_ms=run.delay_ms, started_at=run.started_at,
                   deadline_at=run.deadline_at, ended_at=run.ended_at,
                   reason=run.ended_reason or run.stop_reason,
                   stopping=run.status == "running" and run.stop_requested_at is not None,
                   last_turn_id=run.last_turn_id)  # fmt: skip


class AutoController(Controller):
    path = "/v1/conversations/{conversation_id:str}/auto"
    tags = ["turns"]

    @post("/", status_code=201)
    async def start(self, conversation_id: str, data: AutoStart, principal: Principal, state: State) -> AutoRunOut:
        """The members talk among themselves for ``turns`` turns, ``delayMs`` apart (see "Auto mode")."""
        limits = state.settings.limits
        if data.turns > limits.max_auto_turns:
            raise ValidationFailed(f"turns must be at most {limits.max_auto_turns} (COMPANION_MAX_AUTO_TURNS)",
                                   code="auto_turns_over_limit",
                                   details={"turns": data.turns, "max": limits.max_auto_turns})  # fmt: skip
        async with state.sessions() as session:
            conv = await get_owned(session, principal.user_id, conversation_id)
            if await loader.last_user_message(session, conv.id) is None:
                raise ValidationFailed("there is nothing to continue: the conversation has no user message yet",
                                       code="nothing_to_continue")  # fmt: skip
        if not model_configured(state.model, "actor"):
            raise ModelNotConfigured("actor")
        run, ended = await runs.start_run(state.sessions, principal.user_id, conversation_id, turns=data.turns,
                                          delay_ms=data.delay_ms, max_seconds=limits.auto_max_seconds)  # fmt: skip
        await announce(state.event_hub, ended)  # a dead run of this conversation, found on the way
        out = AutoRunOut.of(run)
        await state.event_hub.append(conversation_id, None, [("auto.started", msgspec.to_builtins(out))])
        state.auto_runner.launch(run)
        return out

    @delete("/", status_code=202)
    async def stop(self, conversation_id: str, principal: Principal, state: State) -> dict[str, Any]:
        """Stop auto mode, from any replica: its running turn is cancelled (a reply already saved
        stays), no further turn starts; ``auto.ended`` follows. 409 ``auto_not_running`` when none runs."""
        async with state.sessions() as session:
            await get_owned(session, principal.user_id, conversation_id)
        run = await service.stop(state, principal.user_id, conversation_id, "user_stop")
        if run is None:
            raise runs.AutoNotRunning(conversation_id)
        return {"runId": run.id, "status": "stopping"}

    @get("/")
    async def read(self, conversation_id: str, session: AsyncSession, principal: Principal) -> AutoRunOut:
        """The running run, else the last one; 404 ``auto_run_not_found`` when auto mode never ran."""
        await get_owned(session, principal.user_id, conversation_id)
        run = await runs.latest(session, conversation_id)
        if run is None:
            raise runs.not_found(conversation_id)
        return AutoRunOut.of(run)

