"""Issue 33 items 2 and 4, with two real ``companion serve`` processes on one database.

* A replica paused (SIGSTOP) in the middle of a turn loses the turn's lease; the other replica
  ends that turn ``turn_abandoned`` and runs a new one. When the paused replica resumes it writes
  nothing more: no reply, no event, no decision row with the old turn's id, and the new turn's
  messages are not interleaved with anything.
* After ``kill -9`` of the replica running a turn, a follower of that turn on the other replica
  hears ``turn.failed`` within the lease time, and a new turn is accepted within 5 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
import time
from pathlib import Path

import httpx
from sqlalchemy import func, select

from app.db.engine import create_engine, session_factory
from app.db.models import ConversationEvent, SpeakerDecision, Message, Turn
from tests.integration.conftest import SECRET, bearer
from tests.integration.turns.test_crash_recovery import companion_serve

ADMIN, ALICE = bearer("root", admin=True), bearer("alice")
KILL_BUDGET_S = 5.0


def _env(db_url: str, tmp_path: Path, sim, name: str) -> dict[str, str]:
    data = tmp_path / name
    data.mkdir()
    return {**os.environ, "COMPANION_DATA_DIR": str(data), "COMPANION_DATABASE_URL": db_url,
            "COMPANION_JWT_SECRET": SECRET, "COMPANION_LLM_BASE_URL": sim.base_url, "COMPANION_LLM_MODEL": "sim",
            "COMPANION_LLM_TIMEOUT_MS": "60000", "COMPANION_TURN_TIMEOUT_S": "300", "COMPANION_LOG_LEVEL": "WARNING"}  # fmt: skip


def _group(client: httpx.Client) -> str:
    ids = [client.post("/v1/agents", json={"name": n}, headers=ADMIN).json()["id"] for n in ("莉娅", "周衡", "阿乐")]
    return client.post("/v1/conversations", json={"kind": "group", "agentIds": ids}, headers=ALICE).json()["id"]


def _wait_user_message(client: httpx.Client, conv: str) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if client.get(f"/v1/conversations/{conv}/messages", headers=ALICE).json()["items"]:
            return
        time.sleep(0.05)
    raise AssertionError("the turn never stored its user message")


def _wait_model_call(sim, seen: int) -> None:
    """Until the simulator has received a model call after the first ``seen`` (the turn is then
    mid-way, awaiting the model: a SQLite writer paused here would block every replica)."""
    deadline = time.monotonic() + 20
    while sim.stats()["requests"] <= seen:
        assert time.monotonic() < deadline, "the turn never called the model"
        time.sleep(0.02)
    time.sleep(0.1)


def _in_background(base: str, path: str, body: dict, out: dict) -> threading.Thread:
    def run() -> None:
        try:
            out["resp"] = httpx.post(base + path, json=body, headers=ALICE, timeout=120)
        except httpx.HTTPError as exc:
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


async def _written_for(db_url: str, turn_id: str) -> dict[str, int]:
    engine = create_engine(db_url)
    try:
        async with session_factory(engine)() as session:
            count = lambda model: select(func.count()).select_from(model).where(model.turn_id == turn_id)  # noqa: E731
            return {
                "agent_messages": await session.scalar(count(Message).where(Message.role == "agent")),
                "decisions": await session.scalar(count(SpeakerDecision)),
                "events": await session.scalar(count(ConversationEvent)),
                "events_after_failed": await session.scalar(
                    select(func.count()).select_from(ConversationEvent).where(
                        ConversationEvent.turn_id == turn_id,
                        ConversationEvent.id > select(func.min(ConversationEvent.id)).where(
                            ConversationEvent.turn_id == turn_id, ConversationEvent.event == "turn.failed",
                        ).scalar_subquery(),
                    )
                ),  # fmt: skip
                "turn": await session.get(Turn, turn_id),
                "names": list((await session.execute(select(ConversationEvent.id, ConversationEvent.event, ConversationEvent.data).where(ConversationEvent.turn_id == turn_id).order_by(ConversationEvent.id))).all()),
            }  # type: ignore[dict-item]
    finally:
        await engine.dispose()


def test_a_paused_replica_writes_nothing_after_its_turn_was_taken_over(db_url: str, tmp_path: Path, sim) -> None:
    sim.configure(latency_ms=2500)  # every call takes a while: the turn is surely mid-way when paused
    with companion_serve(_env(db_url, tmp_path, sim, "a")) as (proc_a, base_a), \
            companion_serve(_env(db_url, tmp_path, sim, "b")) as (_, base_b):  # fmt: skip
        a, b = httpx.Client(base_url=base_a, timeout=30), httpx.Client(base_url=base_b, timeout=60)
        conv = _group(a)
        turns = f"/v1/conversations/{conv}/turns"
        old: dict = {}
        thread = _in_background(base_a, turns, {"content": "我今天好难过", "idempotencyKey": "paused"}, old)
        _wait_user_message(b, conv)
        _wait_model_call(sim, sim.stats()["requests"])  # paused while awaiting the model, holding no write lock
        os.kill(proc_a.pid, signal.SIGSTOP)
        try:
            deadline = time.monotonic() + 15
            while True:  # replica B's reaper ends the paused turn once its lease expired
                resp = b.post(turns, json={"content": "你还在吗"}, headers=ALICE)
                if resp.status_code != 409:
                    break
                assert time.monotonic() < deadline, "the paused replica's turn was never taken over"
                time.sleep(0.3)
            assert resp.status_code == 201, resp.text
            new = resp.json()
            sim.configure(latency_ms=0)
        finally:
            os.kill(proc_a.pid, signal.SIGCONT)
        thread.join(60)
        assert "resp" in old, old
        body = old["resp"].json()
        assert body["status"] == "failed" and body["error"]["code"] == "turn_abandoned", body
        old_id = body["turnId"]
        time.sleep(1.0)  # anything the woken replica still had in flight has landed (or was refused)
        messages = b.get(f"/v1/conversations/{conv}/messages?order=asc&limit=100", headers=ALICE).json()["items"]
    written = asyncio.run(_written_for(db_url, old_id))
    assert written["agent_messages"] == 0, "a reply was saved by a process that had lost its lease"
    assert written["decisions"] == 0, "decision rows were written after the lease was lost"
    assert written["events_after_failed"] == 0, [(i, e, d.get("error"), d.get("agentId")) for i, e, d in written["names"]]  # "events were logged after the turn was abandoned"
    assert written["turn"].status == "failed" and written["turn"].error["code"] == "turn_abandoned"
    assert [m["content"] for m in messages if m["role"] == "user"] == ["我今天好难过", "你还在吗"]
    new_agent = [m for m in messages if m["role"] == "agent"]
    assert new_agent and all(m["turnId"] == new["turnId"] for m in new_agent)
    assert new["status"] == "completed"


def test_a_killed_replicas_turn_fails_for_its_followers_and_a_new_turn_starts_within_5_s(
    db_url: str, tmp_path: Path, sim
) -> None:
    sim.configure(latency_ms=60_000)
    with companion_serve(_env(db_url, tmp_path, sim, "a")) as (proc_a, base_a), \
            companion_serve(_env(db_url, tmp_path, sim, "b")) as (_, base_b):  # fmt: skip
        a, b = httpx.Client(base_url=base_a, timeout=30), httpx.Client(base_url=base_b, timeout=30)
        conv = _group(a)
        turns = f"/v1/conversations/{conv}/turns"
        _in_background(base_a, turns, {"content": "我今天好难过"}, {})
        _wait_user_message(b, conv)
        running = b.get(f"/v1/conversations/{conv}", headers=ALICE)
        assert running.status_code == 200
        heard: dict = {}

        def follow() -> None:  # a follower of the running turn, on the replica that stays up
            turn_id = None
            while turn_id is None:
                busy = b.post(turns, json={"content": "x"}, headers=ALICE)
                turn_id = busy.json().get("details", {}).get("runningTurnId")
            with httpx.stream("GET", f"{base_b}/v1/conversations/{conv}/events",
                              params={"turnId": turn_id, "after": 0}, headers=ALICE, timeout=60) as stream:  # fmt: skip
                heard["ready"] = time.monotonic()
                for line in stream.iter_lines():
                    if line.startswith("event: turn.failed"):
                        heard["failed_at"] = time.monotonic()
                        return

        follower = threading.Thread(target=follow, daemon=True)
        follower.start()
        deadline = time.monotonic() + 10
        while "ready" not in heard and time.monotonic() < deadline:
            time.sleep(0.05)
        proc_a.kill()
        killed = time.monotonic()
        proc_a.wait(10)
        sim.configure(latency_ms=0)
        while True:
            sent = time.monotonic()  # the accepted request was accepted on arrival; its answer waits for the turn's replies
            resp = b.post(turns, json={"content": "还有一件事"}, headers=ALICE)
            if resp.status_code != 409:
                break
            assert time.monotonic() - killed < 15, "conversation still locked"
            time.sleep(0.2)
        accepted_after = sent - killed
        assert resp.status_code == 201, resp.text
        follower.join(20)
    assert accepted_after <= KILL_BUDGET_S, f"a new turn was accepted {accepted_after:.1f} s after the kill"
    assert "failed_at" in heard, "the follower never heard turn.failed"
    assert heard["failed_at"] - killed <= KILL_BUDGET_S + 1
