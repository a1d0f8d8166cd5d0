"""Fixtures for suggestion tests: the turn world plus a scripted ``auto_reply`` model.

The app runs in the test client's own event loop (a portal thread), so the fake coordinates
with the test through plain attributes and polling, never asyncio primitives of the test loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from litestar.testing import AsyncTestClient
from sqlalchemy import func, select

from app.db.engine import session_factory
from app.db.models import Suggestion
from app.main import create_app
from tests.integration.conftest import ALICE, Api
from tests.integration.turns.fakes import World

ZH_OPTIONS = ["我想听你多说一点。", "这件事让你有什么感受？", "我们先换个轻松的话题吧。"]
EN_OPTIONS = ["Tell me more.", "How do you feel?", "Let's change the subject."]


class AutoReplyScript:
    """``auto_reply`` answers: ``answers`` are used in order (the last repeats); ``block`` makes the
    next N calls wait until released or cancelled, counting each cancellation it sees."""

    def __init__(self) -> None:
        self.requests: list[Any] = []
        self.answers: list[Any] = [{"options": ZH_OPTIONS}]
        self.block = 0
        self.started = 0
        self.cancelled = 0
        self.released = False

    async def __call__(self, request: Any) -> Any:
        self.requests.append(request)
        if self.block > 0:
            self.block -= 1
            self.started += 1
            try:
                while not self.released:
                    await asyncio.sleep(0.01)
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]

    def prompt(self, index: int = -1) -> str:
        """The user turn the generator sent (context, anchor, task)."""
        return self.requests[index].messages[1].content


@pytest.fixture
def script() -> AutoReplyScript:
    return AutoReplyScript()


@pytest.fixture
def world(script: AutoReplyScript) -> World:
    return World(auto_reply=script)


@pytest.fixture
async def sapi(settings, world: World) -> AsyncIterator[Api]:
    app = create_app(settings, model=world.model)
    async with AsyncTestClient(app, timeout=30) as client:
        yield Api(client, settings)


async def until(check, timeout: float = 5.0) -> None:
    """Poll ``check()`` (the app works in another thread's loop) until it is true."""
    for _ in range(int(timeout / 0.01)):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached in time")


def in_thread(coro: Any) -> asyncio.Future:
    """Run a test-client call concurrently: the client blocks its caller until the app answers."""
    return asyncio.ensure_future(asyncio.to_thread(asyncio.run, coro))


async def suggestion_rows(engine, conversation_id: str) -> list[Suggestion]:
    async with session_factory(engine)() as s:
        query = select(Suggestion).where(Suggestion.conversation_id == conversation_id).order_by(Suggestion.created_at)
        return list(await s.scalars(query))


async def count(engine, model: Any, **where: Any) -> int:
    async with session_factory(engine)() as s:
        query = select(func.count()).select_from(model).filter_by(**where)
        return int(await s.scalar(query))


def suggest_url(conv_id: str, message_id: str) -> str:
    return f"/v1/conversations/{conv_id}/messages/{message_id}/suggestions"


__all__ = ["ALICE", "AutoReplyScript", "count", "in_thread", "suggest_url", "suggestion_rows", "until"]


async def seed(engine, conv_id: str, *items: tuple[str | None, str]) -> list[str]:
    """Messages stored directly, in order: ``(agent_id, text)``; ``agent_id`` None is the user."""
    from app.messages.store import insert_message

    ids = []
    async with session_factory(engine)() as s:
        for agent_id, text in items:
            role = "user" if agent_id is None else "agent"
            message = await insert_message(s, conv_id, role=role, content=text, agent_id=agent_id)
            await s.commit()
            ids.append(message.id)
    return ids
