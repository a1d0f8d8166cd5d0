"""Shared steps of the auto-mode tests: start, wait, and read what the database recorded."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from sqlalchemy import select

from app.db.engine import session_factory
from app.db.models import ConversationEvent, Message, Turn
from tests.integration.conftest import ALICE, Api

WAIT_S = 30.0  # generous: the tests share two cores with other work


async def start_auto(api: Api, conv_id: str, turns: int, delay_ms: int = 0) -> Any:
    return await api.client.post(f"/v1/conversations/{conv_id}/auto", json={"turns": turns, "delayMs": delay_ms},
                                 headers=ALICE)  # fmt: skip


async def auto_state(api: Api, conv_id: str) -> dict[str, Any]:
    resp = await api.client.get(f"/v1/conversations/{conv_id}/auto", headers=ALICE)
    assert resp.status_code == 200, resp.text
    return resp.json()


async def until_ended(api: Api, conv_id: str, timeout_s: float = WAIT_S) -> dict[str, Any]:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        state = await auto_state(api, conv_id)
        if state["status"] != "running":
            return state
        await asyncio.sleep(0.1)
    raise AssertionError(f"auto mode still running after {timeout_s}s: {state}")


async def auto_turns(engine: Any, conv_id: str) -> list[Turn]:
    async with session_factory(engine)() as session:
        return list(await session.scalars(
            select(Turn).where(Turn.conversation_id == conv_id, Turn.trigger == "auto").order_by(Turn.created_at)
        ))  # fmt: skip


async def until_auto_turn_running(engine: Any, conv_id: str, timeout_s: float = WAIT_S) -> Turn:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        running = [t for t in await auto_turns(engine, conv_id) if t.status == "running"]
        if running:
            return running[0]
        await asyncio.sleep(0.05)
    raise AssertionError("no auto turn started")


async def agent_messages(engine: Any, conv_id: str) -> list[Message]:
    async with session_factory(engine)() as session:
        return list(await session.scalars(
            select(Message).where(Message.conversation_id == conv_id, Message.role == "agent").order_by(Message.seq)
        ))  # fmt: skip


async def events(engine: Any, conv_id: str, name: str) -> list[dict[str, Any]]:
    async with session_factory(engine)() as session:
        rows = await session.scalars(
            select(ConversationEvent).where(ConversationEvent.conversation_id == conv_id, ConversationEvent.event == name)
            .order_by(ConversationEvent.id)
        )  # fmt: skip
        return [r.data for r in rows]


async def until_event(engine: Any, conv_id: str, name: str, timeout_s: float = WAIT_S) -> list[dict[str, Any]]:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if found := await events(engine, conv_id, name):
            return found
        await asyncio.sleep(0.1)
    raise AssertionError(f"no {name} event")
