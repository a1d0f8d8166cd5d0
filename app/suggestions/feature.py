"""How the suggestions feature joins the app: its turn hooks and its HTTP handlers (see app/main.py)."""

from __future__ import annotations

from typing import Any

from app.conversations.settings import register_model_configs
from app.errors import SettingsError
from app.llm.templates import PromptTemplates
from app.suggestions import repository
from app.suggestions.controller import SuggestionController
from app.suggestions.hooks import SuggestionHooks
from app.suggestions.service import SuggestionService
from story.auto_reply import TemplateError, check_template

route_handlers: list[Any] = [SuggestionController]


def plugin(settings: Any, sessions: Any, model: Any) -> SuggestionHooks:
    """The turn plugin (see app/turns/plugins.py).

    The auto-reply template is checked here with the generator's own rule (exactly
    ``{{getvar::language}}`` and ``{{characterName}}``), so a bad override stops start-up
    instead of failing every generation later."""
    register_model_configs(_model_config_ids(settings, model))
    template = PromptTemplates(settings.llm.prompts).text("auto_reply")
    try:
        check_template(template)
    except TemplateError as exc:
        raise SettingsError("llm.prompts.auto_reply", str(exc)) from None
    return SuggestionHooks(SuggestionService(sessions, model, template))


def _model_config_ids(settings: Any, model: Any) -> list[str] | None:
    """The ids conversation settings may name: the configured ``[llm.models]`` when the app talks
    to models through the gateway; an injected model (tests, the demo) answers any id."""
    from app.llm.gateway import ModelGateway

    return sorted(settings.llm.models) if isinstance(model, ModelGateway) else None


async def on_startup(settings: Any, sessions: Any) -> None:
    """Rows a crashed process left ``generating`` become ``failed`` (see ``repository.ABANDONED_AFTER``)."""
    async with sessions() as session:
        await repository.expire_abandoned(session)
