"""Running one generation: a ``suggestions`` row, the pure generator, the outcome stored if current.

Each generation is an asyncio task registered under its conversation, so a new user message in
this process cancels it at once (the model call sees the cancellation). That is only an
optimisation: whether a result may be stored is decided by the row's status in the database
(see ``repository.finish``), which holds across server processes. While it runs, a generation
also watches the database every ``watch_interval_s``: a row cleared by another process, an anchor
edited, regenerated or deleted, or ``autoReply.enabled`` turned off (by any endpoint, in any
process) cancels the model call instead of letting it finish for nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.models import Suggestion
from app.errors import AppError, ModelNotConfigured, ValidationFailed
from app.llm.structured import Structured
from app.suggestions import repository
from app.suggestions.context import Prepared
from app.suggestions.errors import SuggestionGenerationFailed, SuggestionsStale
from app.suggestions.schemas import to_out
from story.auto_reply import AutoReplyError, AutoReplyGenerationFailed, generate_suggestions

log = logging.getLogger("app.suggestions")
Emit = Callable[[str, dict[str, Any]], Awaitable[None]]


class Outcome(msgspec.Struct, kw_only=True):
    row: Suggestion | None
    stored: bool  # False: the row was cleared (new user message) before the result arrived
    error: AppError | None = None

    def payload(self) -> dict[str, Any]:
        body: dict[str, Any] = msgspec.to_builtins(to_out(self.row)) if self.row is not None else {}
        if self.error is not None:
            body["code"] = self.error.code
        return body


class _Watched(Structured):
    """Passes calls through; remembers a ``ModelNotConfigured`` the generator would count as a
    failed attempt, so the caller can answer 503 instead of 502, and the name of the model that
    answered. Its ``complete_struct`` (the one structured path, from ``Structured``) runs over
    this ``complete``, so every attempt of the repair loop is watched."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.not_configured: ModelNotConfigured | None = None
        self.model_name: str | None = None

    async def complete(self, request: Any) -> Any:
        try:
            result = await self.model.complete(request)
        except ModelNotConfigured as exc:
            self.not_configured = exc
            raise
        self.model_name = getattr(result, "model", None) or self.model_name
        return result


def _as_app_error(exc: Exception) -> AppError:
    if isinstance(exc, AppError):
        return exc
    if isinstance(exc, AutoReplyError):  # e.g. an empty saved anchor: bad input, not a model failure
        return ValidationFailed(str(exc), code=exc.code)
    log.error("suggestion generation crashed", exc_info=exc)
    return AppError(f"suggestion generation failed: {type(exc).__name__}")


def _log_crash(task: asyncio.Task[Outcome]) -> None:
    """A generation that crashed (e.g. the database went away) leaves its row ``generating``;
    ``repository.expire_abandoned`` fails it later. Here it is at least logged, not lost."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.error("suggestion generation crashed", exc_info=exc)


def _usage(usage: Any) -> dict[str, Any]:
    return msgspec.to_builtins(usage) if usage is not None else {}


class SuggestionService:
    watch_interval_s: float = 0.5

    def __init__(self, sessions: async_sessionmaker[AsyncSession], model: Any, template: str) -> None:
        self.sessions = sessions
        self.model = model
        self.template = template
        self._running: dict[str, set[asyncio.Task[Outcome]]] = {}

    async def start(
        self, prepared: Prepared, emit: Emit | None = None, *, metric_turn_id: str | None = None
    ) -> tuple[str, asyncio.Task[Outcome]]:
        """``metric_turn_id``: the turn this generation belongs to, which gets an ``auto_reply``
        stage metric (requests for older messages record none: they must not touch turns)."""
        async with self.sessions() as session:
            row = await repository.create(session, conversation_id=prepared.conversation_id,
                                          anchor_message_id=prepared.anchor_message_id, turn_id=prepared.turn_id)  # fmt: skip
        task = asyncio.ensure_future(self._run(row.id, prepared, emit, metric_turn_id))
        tasks = self._running.setdefault(prepared.conversation_id, set())
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        task.add_done_callback(_log_crash)
        return row.id, task

    async def generate_now(self, prepared: Prepared) -> Suggestion:
        """For a request: wait for the result (a client going away does not cancel it)."""
        suggestion_id, task = await self.start(prepared)
        await asyncio.wait({task})
        if task.cancelled():
            raise SuggestionsStale(suggestion_id)
        outcome = task.result()
        if outcome.error is not None:
            raise outcome.error
        if not outcome.stored or outcome.row is None:
            raise SuggestionsStale(suggestion_id)
        return outcome.row

    def cancel_running(self, conversation_id: str) -> None:
        """A new user message is stored (and the rows cleared with it): this process's generations
        for the conversation stop."""
        for task in list(self._running.get(conversation_id, ())):
            task.cancel()

    async def _run(self, suggestion_id: str, prepared: Prepared, emit: Emit | None, metric_turn_id: str | None) -> Outcome:
        started = time.perf_counter()
        model = _Watched(self.model)
        error: AppError | None = None
        try:
            result = await self._watched(suggestion_id, generate_suggestions(
                model, prepared.input, prepared.config, template=self.template))
        except asyncio.CancelledError:
            await asyncio.shield(self._finish(suggestion_id, "cleared", {}))
            if metric_turn_id:
                await asyncio.shield(self._metric(metric_turn_id, prepared, started, {}, "skipped"))
            raise
        except AutoReplyGenerationFailed as exc:
            problems = exc.problems_per_attempt
            error = model.not_configured or SuggestionGenerationFailed(suggestion_id, exc.attempts, problems)
            values = {"attempts": exc.attempts, "problems": problems, "usage": _usage(exc.usage),
                      "model": exc.model or model.model_name}  # fmt: skip
            stored = await self._finish(suggestion_id, "failed", values)
        except Exception as exc:  # noqa: BLE001 - stored as failed and reported, never silent
            error = _as_app_error(exc)
            stored = await self._finish(suggestion_id, "failed", {"problems": [[f"{error.code}: {exc}"]]})
        else:
            values = {
                "options": list(result.options), "fallback": result.fallback, "attempts": len(result.attempts),
                "usage": _usage(result.usage), "model": result.model or model.model_name, "problems": [a.problems for a in result.attempts],
            }  # fmt: skip
            stored = await self._finish(suggestion_id, "ready", values)
        async with self.sessions() as session:
            row = await repository.get(session, suggestion_id)
        if metric_turn_id and row is not None:
            kind = "error" if error else "skipped" if not stored else "fallback" if row.fallback else "ok"
            await self._metric(metric_turn_id, prepared, started, row.usage or {}, kind)
        outcome = Outcome(row=row, stored=stored, error=error)
        if emit is not None and stored:
            await emit("suggestions.failed" if error else "suggestions.ready", outcome.payload())
        return outcome

    async def _watched(self, suggestion_id: str, generation: Any) -> Any:
        """Run the generation; cancel it once the database says it is no longer current."""
        gen = asyncio.ensure_future(generation)
        watcher = asyncio.ensure_future(self._watch(suggestion_id, gen))
        try:
            return await gen
        finally:
            watcher.cancel()

    async def _watch(self, suggestion_id: str, gen: asyncio.Future[Any]) -> None:
        while not gen.done():
            await asyncio.sleep(self.watch_interval_s)
            try:
                async with self.sessions() as session:
                    current = await repository.still_current(session, suggestion_id)
            except Exception:  # noqa: BLE001 - a failed check is not a reason to stop the generation
                log.warning("could not check suggestion %s", suggestion_id, exc_info=True)
                continue
            if not current:
                gen.cancel()
                return

    async def _metric(self, turn_id: str, prepared: Prepared, started: float, usage: dict[str, Any], outcome: str) -> None:
        """Latency and tokens of this turn's suggestions, for the same SQL p50/p95 as other stages."""
        ms = round((time.perf_counter() - started) * 1000, 3)
        try:
            async with self.sessions() as session:
                await repository.add_metric(session, turn_id=turn_id, conversation_id=prepared.conversation_id,
                                            ms=ms, usage=usage, outcome=outcome)  # fmt: skip
        except Exception:  # noqa: BLE001 - a lost metric must not lose the suggestions
            log.exception("auto_reply metric for turn %s not written", turn_id)

    async def _finish(self, suggestion_id: str, status: str, values: dict[str, Any]) -> bool:
        async with self.sessions() as session:
            return await repository.finish(session, suggestion_id, status=status, **values)
