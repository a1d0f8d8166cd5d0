"""How the suggestions feature joins the app: its turn hooks and its HTTP handlers (see app/main.py)."""

from __future__ import annotations

from typing import Any

route_handlers: list[Any] = []


def hooks(settings: Any, sessions: Any, model: Any) -> Any | None:
    """The hook object for the turn pipeline (see app/turns/hooks.py), or None."""
    return None


async def on_startup(settings: Any, sessions: Any) -> None:
    """Crash recovery on start-up (nothing yet)."""
