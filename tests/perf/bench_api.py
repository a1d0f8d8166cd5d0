"""Benchmark: the real server process over loopback, N concurrent clients, SQLite and PostgreSQL.

Measures requests/second and p50/p99 latency of ``GET /v1/conversations/{id}/messages`` (a page
of 50 from 2,000 messages) and of creating messages (``POST .../messages``, all clients on one
conversation: the worst case for seq allocation). Prints JSON.

    python tests/perf/bench_api.py [--clients 16] [--seconds 5] [--postgres URL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import httpx  # noqa: E402

from tests.perf._server import load, postgres_database, server, token  # noqa: E402

SEED_MESSAGES = 2000


async def scenario(base: str, clients: int, seconds: float) -> dict[str, object]:
    admin, user = token("bench-admin", admin=True), token("bench-user")
    async with httpx.AsyncClient(base_url=base, timeout=30, limits=httpx.Limits(max_connections=clients + 4)) as c:
        ids = [(await c.post("/v1/agents", json={"name": f"A{i}"}, headers=admin)).json()["id"] for i in range(3)]
        conv = (await c.post("/v1/conversations", json={"kind": "group", "agentIds": ids}, headers=user)).json()["id"]
        url = f"/v1/conversations/{conv}/messages"
        sem = asyncio.Semaphore(clients)

        async def seed(i: int) -> None:
            async with sem:
                (await c.post(url, json={"content": f"seed message {i} " + "x" * 80}, headers=user)).raise_for_status()

        await asyncio.gather(*(seed(i) for i in range(SEED_MESSAGES)))

        async def read(i: int) -> None:
            before = 200 + (i * 97) % (SEED_MESSAGES - 200)
            (await c.get(f"{url}?limit=50&before={before}", headers=user)).raise_for_status()

        async def write(i: int) -> None:
            (await c.post(url, json={"content": f"bench write from client {i}"}, headers=user)).raise_for_status()

        reads = await load(clients, seconds, read)
        writes = await load(clients, seconds, write)
        seqs = []
        cursor = None
        while True:
            page = (await c.get(url + "?limit=200" + (f"&before={cursor}" if cursor else ""), headers=user)).json()
            seqs += [m["seq"] for m in page["items"]]
            if not (cursor := page["nextCursor"]):
                break
        gap_free = sorted(seqs) == list(range(1, len(seqs) + 1))
    return {"list_messages": reads, "create_message": writes, "seq_gap_free": gap_free, "messages": len(seqs)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--postgres", default=os.environ.get("COMPANION_TEST_POSTGRES_URL"))
    args = parser.parse_args()
    results: dict[str, object] = {"clients": args.clients, "seconds": args.seconds}
    with server(None) as base:
        results["sqlite"] = asyncio.run(scenario(base, args.clients, args.seconds))
    if args.postgres:
        with postgres_database(args.postgres) as url, server(url) as base:
            results["postgresql"] = asyncio.run(scenario(base, args.clients, args.seconds))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
