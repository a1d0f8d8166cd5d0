"""Soak: two server processes on one PostgreSQL database, a simulator with 50 % faults, N clients
posting turns for a bounded time, chaos every ``--chaos-every`` seconds (in turn: ``kill -9`` of
one server, restarted at once on a new port, and ``SIGSTOP`` of the other for ``--pause-s``), then
a consistency check straight from the database. Not part of the test run; prints JSON.

    .venv/bin/python tests/perf/soak.py --clients 8 --seconds 600 --chaos-every 120 [--fault-rate 0.5]

Each client owns one user and one group conversation and posts turns with idempotency keys; it
starts on server A or B, retries the same key after a 409 (``Retry-After``) or a dropped
connection (moving to the surviving server), so a message is never sent twice under two keys.
Figures: requests by status, 5xx count, turns accepted / completed / failed by code (the
last answer for each key), user messages lost (accepted but not stored) or duplicated, turns left
running, replies saved by a process after its turn was abandoned (an agent message of a
``turn_abandoned`` turn created after the turn ended: must be 0), the longest time from a kill
until every conversation that had a turn running on the killed server was accepted again, and
``/healthz`` latency of the servers not paused (p50/p99).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.perf._server import SECRET, free_port, postgres_database, token  # noqa: E402


def spawn(database_url: str, extra_env: dict[str, str], data_dir: str) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "COMPANION_DATA_DIR": data_dir, "COMPANION_JWT_SECRET": SECRET,
           "COMPANION_DATABASE_URL": database_url, "COMPANION_LOG_LEVEL": "ERROR", **extra_env}  # fmt: skip
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "app.asgi:create", "--port", str(port), "--log-level", "error",
         "--no-access-log"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(base + "/readyz", timeout=1).status_code == 200:
                return proc, base
        if proc.poll() is not None:
            raise RuntimeError("server died during start-up")
        time.sleep(0.2)
    raise RuntimeError("server did not become ready")


class Soak:
    def __init__(self, servers: list[str], clients: int, seconds: float, kill_at: float,
                 chaos_every: float = 0.0, pause_s: float = 15.0, respawn: Any = None) -> None:  # fmt: skip
        self.servers = servers
        self.alive = list(servers)
        self.chaos_every, self.pause_s, self.respawn = chaos_every, pause_s, respawn
        self.paused: set[str] = set()
        self.outcomes: dict[str, str] = {}  # key -> "completed" or the failed turn's code
        self.health_ms: list[float] = []
        self.chaos_log: list[dict[str, Any]] = []
        self.n_clients = clients
        self.seconds = seconds
        self.kill_at = kill_at
        self.statuses: collections.Counter[str] = collections.Counter()
        self.accepted: dict[str, str] = {}  # idempotency key -> content, answered 200/201
        self.sent: dict[str, str] = {}
        self.killed_at: float | None = None
        self.victims: dict[str, float | None] = {}  # conversation -> seconds until a new turn after the kill
        self.in_flight: dict[str, str] = {}  # conversation -> server base of the request in flight

    async def setup(self) -> list[tuple[str, dict[str, str]]]:
        admin = token("soak-admin", admin=True)
        async with httpx.AsyncClient(base_url=self.servers[0], timeout=30) as client:
            agents = [(await client.post("/v1/agents", json={"name": n}, headers=admin)).json()["id"]
                      for n in ("莉娅", "周衡", "小跳")]  # fmt: skip
            out = []
            for i in range(self.n_clients):
                user = token(f"soak-user-{i}")
                conv = (await client.post("/v1/conversations", json={"kind": "group", "agentIds": agents},
                                          headers=user)).json()  # fmt: skip
                out.append((conv["id"], user))
        return out

    async def client(self, i: int, conv_id: str, headers: dict[str, str], stop: float) -> None:
        n = 0
        async with httpx.AsyncClient(timeout=120) as http:
            while time.monotonic() < stop:
                n += 1
                key, content = f"c{i}-{n}", f"soak {i} {n} 我今天好难过"
                self.sent[key] = content
                while time.monotonic() < stop + 60:
                    home = self.servers[i % len(self.servers)]
                    base = home if home in self.alive else self.alive[0]
                    self.in_flight[conv_id] = base
                    sent_at = time.monotonic()
                    try:
                        resp = await http.post(f"{base}/v1/conversations/{conv_id}/turns", headers=headers,
                                               json={"content": content, "idempotencyKey": key})  # fmt: skip
                    except httpx.HTTPError:
                        self.statuses["connection_error"] += 1
                        if self.killed_at is not None and conv_id not in self.victims:
                            self.victims[conv_id] = None
                        await asyncio.sleep(0.2)
                        continue
                    finally:
                        self.in_flight.pop(conv_id, None)
                    self.statuses[str(resp.status_code)] += 1
                    if resp.status_code == 409:
                        await asyncio.sleep(min(float(resp.headers.get("retry-after", "1")), 2.0))
                        continue
                    if resp.status_code in (200, 201):
                        self.accepted[key] = content
                        with contextlib.suppress(Exception):
                            body = resp.json()
                            self.outcomes[key] = ("completed" if body.get("status") == "completed"
                                                  else (body.get("error") or {}).get("code", body.get("status")))  # fmt: skip
                        if conv_id in self.victims and self.victims[conv_id] is None:  # the lock is free again
                            self.victims[conv_id] = round(sent_at - (self.killed_at or 0), 2)
                    break

    async def run(self, procs: list[subprocess.Popen]) -> None:
        convs = await self.setup()
        stop = time.monotonic() + self.seconds

        async def kill(index: int) -> None:
            base = self.servers[index]
            victims = [c for c, b in self.in_flight.items() if b == base]
            os.kill(procs[index].pid, signal.SIGKILL)
            self.killed_at = time.monotonic()
            self.alive = [b for b in self.alive if b != base]
            for conv in victims:
                self.victims.setdefault(conv, None)
            self.chaos_log.append({"at": round(time.monotonic() - begun, 1), "kill": index, "turns_running": len(victims)})
            if self.respawn is not None:  # a supervisor restarts it
                proc, new_base = await asyncio.to_thread(self.respawn)
                procs[index] = proc
                self.servers[index] = new_base
                self.alive.append(new_base)

        async def pause(index: int) -> None:
            base = self.servers[index]
            os.kill(procs[index].pid, signal.SIGSTOP)
            self.paused.add(base)
            self.chaos_log.append({"at": round(time.monotonic() - begun, 1), "pause": index, "seconds": self.pause_s})
            try:
                await asyncio.sleep(self.pause_s)
            finally:
                os.kill(procs[index].pid, signal.SIGCONT)
                self.paused.discard(base)

        async def chaos() -> None:
            if not self.chaos_every:
                await asyncio.sleep(self.kill_at)
                await kill(0)
                return
            round_no = 0
            while time.monotonic() + self.chaos_every < stop:
                await asyncio.sleep(self.chaos_every)
                await (kill if round_no % 2 == 0 else pause)(round_no % 2)
                round_no += 1

        async def prober() -> None:
            async with httpx.AsyncClient(timeout=10) as http:
                while time.monotonic() < stop:
                    for base in [b for b in self.alive if b not in self.paused]:
                        t = time.perf_counter()
                        with contextlib.suppress(httpx.HTTPError):
                            await http.get(base + "/healthz")
                            self.health_ms.append((time.perf_counter() - t) * 1000)
                    await asyncio.sleep(0.5)

        begun = time.monotonic()
        await asyncio.gather(chaos(), prober(), *(self.client(i, c, h, stop) for i, (c, h) in enumerate(convs)))


async def consistency(database_url: str, soak: Soak) -> dict[str, Any]:
    from sqlalchemy import func, select

    from app.db.engine import create_engine, session_factory
    from app.db.models import Message, Turn

    engine = create_engine(database_url)
    try:
        async with session_factory(engine)() as s:
            counts = dict((await s.execute(
                select(Message.content, func.count()).where(Message.role == "user").group_by(Message.content)
            )).all())  # fmt: skip
            running = await s.scalar(select(func.count()).select_from(Turn).where(Turn.status == "running"))
            abandoned = await s.scalar(select(func.count()).select_from(Turn).where(Turn.error["code"].as_string() == "turn_abandoned"))
            late = await s.scalar(
                select(func.count()).select_from(Message).join(Turn, Turn.id == Message.turn_id).where(
                    Message.role == "agent", Turn.error["code"].as_string() == "turn_abandoned",
                    Message.created_at > Turn.completed_at,
                )
            )  # fmt: skip
    finally:
        await engine.dispose()
    lost = [k for k, content in soak.accepted.items() if counts.get(content, 0) == 0]
    duplicated = [c for c, n in counts.items() if n > 1]
    return {"user_messages_stored": sum(counts.values()), "lost": len(lost), "duplicated": len(duplicated),
            "turns_left_running": running, "turns_abandoned": abandoned,
            "replies_saved_after_lost_lease": late}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--kill-at", type=float, default=None, help="seconds after start (default: half-way)")
    parser.add_argument("--fault-rate", type=float, default=0.5)
    parser.add_argument("--latency-ms", type=float, default=150)
    parser.add_argument("--chaos-every", type=float, default=0.0,
                        help="seconds between chaos rounds (kill -9 and restart, then SIGSTOP); 0: one kill at --kill-at")
    parser.add_argument("--pause-s", type=float, default=15.0)
    parser.add_argument("--postgres", default=os.environ.get("COMPANION_TEST_POSTGRES_URL",
                                                             "postgresql+asyncpg://postgres@127.0.0.1:5432/test"))
    args = parser.parse_args()

    from app.llm.simulator import start_simulator_in_thread

    sim = start_simulator_in_thread(latency_ms=args.latency_ms, jitter_ms=args.latency_ms / 2, fault_rate=args.fault_rate,
                                    seed=5, hang_s=5)  # fmt: skip
    env = {"COMPANION_LLM_BASE_URL": sim.base_url, "COMPANION_LLM_MODEL": "sim", "COMPANION_LLM_TIMEOUT_MS": "3000",
           "COMPANION_TURN_TIMEOUT_S": "600"}  # fmt: skip
    with postgres_database(args.postgres) as url, tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "app.cli", "migrate"], check=True, capture_output=True,
                       env={**os.environ, "COMPANION_DATABASE_URL": url, "COMPANION_DATA_DIR": tmp,
                            "COMPANION_JWT_SECRET": SECRET})  # fmt: skip
        procs, bases = [], []
        try:
            for _ in range(2):
                proc, base = spawn(url, env, tmp)
                procs.append(proc)
                bases.append(base)
            soak = Soak(bases, args.clients, args.seconds, args.kill_at if args.kill_at is not None else args.seconds / 2,
                        chaos_every=args.chaos_every, pause_s=args.pause_s,
                        respawn=(lambda: spawn(url, env, tmp)) if args.chaos_every else None)  # fmt: skip
            started = time.monotonic()
            asyncio.run(soak.run(procs))
            elapsed = time.monotonic() - started
            check = asyncio.run(consistency(url, soak))
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.terminate()
                    proc.wait(10)
            sim.stop()
    recovery = [v for v in soak.victims.values() if v is not None]
    health = sorted(soak.health_ms)
    outcomes = collections.Counter(soak.outcomes.values())
    print(json.dumps({
        "clients": args.clients, "seconds": round(elapsed, 1), "fault_rate": args.fault_rate,
        "requests_by_status": dict(sorted(soak.statuses.items())),
        "responses_5xx": sum(n for s, n in soak.statuses.items() if s.startswith("5")),
        "turns_accepted": len(soak.accepted), "turns_completed": outcomes.get("completed", 0),
        "turns_failed_by_code": {k: v for k, v in sorted(outcomes.items()) if k != "completed"},
        "completed_share": round(outcomes.get("completed", 0) / max(1, len(soak.outcomes)), 3), **check,
        "chaos": soak.chaos_log,
        "healthz_ms_p50": round(health[len(health) // 2], 1) if health else None,
        "healthz_ms_p99": round(health[min(len(health) - 1, int(len(health) * 0.99))], 1) if health else None,
        "killed_server_conversations": len(soak.victims),
        "seconds_until_accepting_again_max": max(recovery) if recovery else None,
        "conversations_not_recovered": sum(1 for v in soak.victims.values() if v is None),
    }, indent=2))


if __name__ == "__main__":
    main()
