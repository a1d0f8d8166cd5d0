"""Two real ``companion serve`` processes on one PostgreSQL database: a turn posted to server A
is followed on server B from the middle (``Last-Event-ID``); every event arrives, in order."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.conftest import PG_ENV
from tests.perf._server import postgres_database, server, token

ALICE = token("alice")
ADMIN = token("root", admin=True)


async def _events(resp: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    item: dict[str, Any] = {}
    async for line in resp.aiter_lines():
        if not line:
            if item.get("event"):
                yield {**item, "at": time.monotonic()}
            item = {}
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            item[field] = int(value) if field == "id" else json.loads(value) if field == "data" else value


def _durable(events: list[dict[str, Any]]) -> list[tuple[int, str, Any]]:
    return [(e["id"], e["event"], e["data"]) for e in events if e["event"] != "message.delta"]


def _text(events: list[dict[str, Any]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for e in events:
        if e["event"] == "message.delta":
            out[e["data"]["draftId"]] = out.get(e["data"]["draftId"], "") + e["data"]["delta"]
    return out


@pytest.fixture
def pg_database() -> Any:
    base = os.environ.get(PG_ENV)
    if not base:
        pytest.skip(f"two-process test needs PostgreSQL: set {PG_ENV}")
    with postgres_database(base) as url:
        yield url


async def test_a_turn_on_server_a_is_followed_on_server_b_from_the_middle(pg_database: str, sim) -> None:
    sim.configure(latency_ms=100, ttft_ms=150, tokens_per_s=40)
    env = {"COMPANION_LLM_BASE_URL": sim.base_url, "COMPANION_LLM_MODEL": "sim", "COMPANION_LLM_TIMEOUT_MS": "15000"}
    with server(pg_database, env) as base_a, server(pg_database, env) as base_b:
        async with httpx.AsyncClient(base_url=base_a, timeout=60) as a, httpx.AsyncClient(base_url=base_b, timeout=60) as b:
            agents = [(await a.post("/v1/agents", json={"name": n}, headers=ADMIN)).json()["id"] for n in ("莉娅", "周衡")]
            conv = (await a.post("/v1/conversations", json={"kind": "group", "agentIds": agents}, headers=ALICE)).json()
            follower: asyncio.Task[list[dict[str, Any]]] | None = None
            opened: dict[str, float] = {}

            async def follow_on_b(after: int, turn_id: str) -> list[dict[str, Any]]:
                headers = {**ALICE, "accept": "text/event-stream", "Last-Event-ID": str(after)}
                async with b.stream("GET", f"/v1/conversations/{conv['id']}/events", params={"turnId": turn_id},
                                    headers=headers) as resp:  # fmt: skip
                    assert resp.status_code == 200
                    opened["at"] = time.monotonic()
                    return [e async for e in _events(resp)]

            seen: list[dict[str, Any]] = []
            async with a.stream("POST", f"/v1/conversations/{conv['id']}/turns", json={"content": "我今天好难过，陪我聊聊"},
                                headers={**ALICE, "accept": "text/event-stream"}) as resp:  # fmt: skip
                assert resp.status_code == 201
                async for event in _events(resp):
                    if follower is None and event["event"] in ("message.delta", "message.created"):
                        middle = max(e["id"] for e in seen if "id" in e)  # the last id before any reply text
                        follower = asyncio.ensure_future(follow_on_b(middle, seen[0]["data"]["turnId"]))
                    seen.append(event)
            assert follower is not None
            on_b = await asyncio.wait_for(follower, 30)

    end = next(e for e in seen if e["event"] in ("turn.completed", "turn.failed"))
    last = seen[-1]  # turn.closed: after the suggestions, the turn's last event
    assert end["event"] == "turn.completed" and last["event"] == on_b[-1]["event"] == "turn.closed"
    assert _durable(on_b) == [d for d in _durable(seen) if middle < d[0]]  # same ids, order and data
    assert _text(on_b) == _text(seen) and _text(seen)  # every character of every draft, none twice
    ids = [e["id"] for e in on_b]
    assert ids == sorted(set(ids)) and ids[0] > middle  # every event on B has an id (deltas: coalesced rows)
    assert opened["at"] < end["at"]  # B was following while the turn ran on A ...
    assert on_b[-1]["at"] - last["at"] < 5  # ... and woken by NOTIFY, not by the 15 s keep-alive re-read
    if os.environ.get("EVENTS_TEST_DEBUG"):
        print([(e.get("id"), e["event"], round(e["at"] - seen[0]["at"], 3)) for e in seen])
        print([(e.get("id"), e["event"], round(e["at"] - seen[0]["at"], 3)) for e in on_b], middle)
