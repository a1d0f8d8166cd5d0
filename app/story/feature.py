"""How the story feature joins the app: its turn plugin and its HTTP handlers (see app/main.py)."""

from __future__ import annotations

from typing import Any

from app.story.controller import StoryController, reset_by_member_path
from app.story.hooks import StoryHooks

route_handlers: list[Any] = [StoryController, reset_by_member_path]


def plugin(settings: Any, sessions: Any, model: Any) -> Any | None:
    """The turn plugin (see app/turns/plugins.py); it is a no-op for
    conversations whose ``settings.story.enabled`` is false."""
    return StoryHooks(sessions, model, initialize_ahead=getattr(settings, "story_initialize_ahead", True))


async def on_startup(settings: Any, sessions: Any) -> None:
    """No crash recovery needed: a state is only ever written by one committed CAS statement,
    so a crash leaves either the old or the new revision; an interrupted turn's reply is adopted
    (or the state reinitialized) by the next turn."""
