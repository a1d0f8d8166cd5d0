"""Composition root: builds the Litestar app from settings."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar
from litestar.datastructures import State
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from sqlalchemy.ext.asyncio import AsyncEngine

from app.agents.controller import AgentController
from app.analytics_api.controller import AnalyticsController
from app.api.deps import provide_principal, provide_session
from app.api.errors import EXCEPTION_HANDLERS
from app.api.guard import guard_request
from app.api.openapi import install as install_openapi
from app.metrics import http_metrics_middleware, metrics_endpoint
from app.db import timezones as _timezones  # noqa: F401 - naive SQLite timestamps read as UTC
from app.api.health import healthz, readyz
from app.conversations.controller import ConversationController
from app.lore.controller import LoreController
from app.db.engine import create_engine, session_factory
from app.events import feature as events_feature
from app.db.migrate import is_at_head, upgrade
from app.errors import SettingsError
from app.llm.templates import PromptTemplates
from app.messages.controller import MessageController
from app.story import feature as story_feature
from app.suggestions import feature as suggestions_feature
from app.turns.pipeline import TurnPipeline
from app.turns.weights import WeightsStore
from app.turns.continue_controller import ContinueController, SpeakController
from app.turns import reaper as turn_reaper
from app.auto import feature as auto_feature
from app.turns.controller import RegenerateController, TurnController
from app import web
from app.settings import Settings

log = logging.getLogger("app")


class UnmigratedDatabase(RuntimeError):
    pass


async def prepare_database(settings: Settings, engine: AsyncEngine) -> None:
    """Embedded SQLite is migrated on start; an external database must be migrated explicitly."""
    if await is_at_head(engine):
        return
    if settings.is_embedded_sqlite:
        log.info("migrating embedded SQLite database to head")
        await upgrade(settings.database_url)
        return
    raise UnmigratedDatabase(
        "the database is not at the newest migration; run `companion migrate` first "
        "(refusing to serve an unmigrated external database)"
    )


def build_model(settings: Settings) -> Any:
    from app.llm.gateway import ModelGateway

    return ModelGateway(settings.llm)


FEATURES = (story_feature, suggestions_feature)


def _reload_weights_on_sighup(store: WeightsStore) -> None:
    """``kill -HUP <pid>`` reloads the scoring weights (they also reload when the file changes)."""
    import asyncio
    import signal

    try:
        asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, lambda: store.reload(force=True))
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
        log.debug("SIGHUP weights reload not available in this context")


def build_pipeline(settings: Settings, sessions: Any, model: Any, templates: PromptTemplates) -> Any:
    plugins = [p for f in FEATURES if (p := f.plugin(settings, sessions, model)) is not None]
    return TurnPipeline(
        sessions=sessions, model=model, templates=templates, settings=settings,
        weights=WeightsStore(settings.scoring_weights_path), plugins=plugins,
    )


def create_app(settings: Settings, *, model: Any = None, engine: AsyncEngine | None = None) -> Litestar:
    """``model`` replaces the LLM gateway (tests pass a fake); ``engine`` shares a database."""

    templates = PromptTemplates(settings.llm.prompts)
    templates.validate()  # a template missing a required variable stops start-up

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        own_engine = engine is None
        eng = engine or create_engine(settings.database_url)
        own_model = model is None
        app.state.model = model if model is not None else build_model(settings)
        try:
            await prepare_database(settings, eng)
            app.state.engine = eng
            app.state.sessions = session_factory(eng)
            app.state.templates = templates
            for feature in FEATURES:
                await feature.on_startup(settings, app.state.sessions)
            app.state.turn_pipeline = build_pipeline(settings, app.state.sessions, app.state.model, templates)
            _reload_weights_on_sighup(app.state.turn_pipeline.weights)
            yield
        finally:
            if own_model and hasattr(app.state.model, "aclose"):
                await app.state.model.aclose()
            if own_engine:
                await eng.dispose()

    if settings.limits.max_body_bytes <= 0:
        raise SettingsError("COMPANION_MAX_BODY_BYTES", "must be positive")
    app = Litestar(
        route_handlers=[
            healthz, readyz, metrics_endpoint, AgentController, ConversationController, MessageController, TurnController, ContinueController, SpeakController,
            AnalyticsController, RegenerateController, LoreController,
            *story_feature.route_handlers, *suggestions_feature.route_handlers,
            *events_feature.route_handlers, *auto_feature.route_handlers,
            *web.route_handlers,
        ],  # fmt: skip
        dependencies={"session": Provide(provide_session), "principal": Provide(provide_principal, sync_to_thread=False)},
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        before_request=guard_request,
        middleware=[http_metrics_middleware],
        lifespan=[lifespan, events_feature.lifespan, turn_reaper.lifespan, auto_feature.lifespan],
        state=State({"settings": settings}),
        request_max_body_size=settings.limits.max_body_bytes,
        openapi_config=OpenAPIConfig(title="Companion group-chat backend", version="0.1.0", path="/schema"),
    )
    install_openapi(app)  # every error status documented with the one error shape
    return app
