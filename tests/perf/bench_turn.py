"""Benchmark: group turns.

1. Against the LLM simulator at a fixed latency L (default 200 ms): a 3-agent group, reply limit
   2, messages that address everyone (so 2 agents are usually selected), no story. Reports turn
   latency and its ratio to the critical path (max(intent, emotion) + select + actor + cross +
   quality, as measured per turn) and to a fully sequential run of the same model calls.
2. Orchestration overhead: CPU milliseconds per turn with a zero-latency in-process fake, on
   SQLite and PostgreSQL (everything except model time: DB, scheduling, serialisation).

    python tests/perf/bench_turn.py [--turns 30] [--latency-ms 200] [--postgres URL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from litestar.testing import AsyncTestClient  # noqa: E402

from app.auth.tokens import issue_token  # noqa: E402
from app.main import create_app  # noqa: E402
from app.settings import load_settings  # noqa: E402
from tests.perf._server import postgres_database, summarize  # noqa: E402

SECRET = "bench-secret-" + "x" * 32
ADMIN = {"Authorization": "Bearer " + issue_token(SECRET, "admin", admin=True, ttl_s=7200)}
USER = {"Authorization": "Bearer " + issue_token(SECRET, "bench", ttl_s=7200)}
TEXTS = ["大家怎么看？我今天好难过", "你们觉得我该不该换工作？", "大家好呀，今天有什么好玩的？"]


async def _group(client: AsyncTestClient) -> str:
    caps = [{"comfort": 0.9}, {"analysis": 0.9}, {"playful": 0.9}]
    ids = [(await client.post("/v1/agents", json={"name": n, "capabilities": c}, headers=ADMIN)).json()["id"]
           for n, c in zip(["莉娅", "周衡", "小跳"], caps, strict=True)]  # fmt: skip
    body = {"kind": "group", "agentIds": ids, "settings": {"replyLimit": 2, "autoReply": {"enabled": False}}}
    return (await client.post("/v1/conversations", json=body, headers=USER)).json()["id"]


async def simulator_run(turns: int, latency_ms: float, data_dir: str) -> dict[str, object]:
    from app.llm.simulator import start_simulator_in_thread

    with start_simulator_in_thread(latency_ms=latency_ms, seed=1) as sim:
        env = {"COMPANION_DATA_DIR": data_dir, "COMPANION_JWT_SECRET": SECRET, "COMPANION_LLM_BASE_URL": sim.base_url,
               "COMPANION_LLM_MODEL": "simulator"}  # fmt: skip
        settings = load_settings(env)
        ratios_cp, ratios_seq, totals, actors = [], [], [], []
        async with AsyncTestClient(create_app(settings), timeout=60) as client:
            conv = await _group(client)
            for i in range(turns):
                t = time.perf_counter()
                body = (await client.post(f"/v1/conversations/{conv}/turns", json={"content": TEXTS[i % 3]},
                                          headers=USER)).json()  # fmt: skip
                wall = (time.perf_counter() - t) * 1000
                tm = body["orchestration"]["timings"]
                critical = max(tm["intent"], tm["emotion"]) + tm["select"] + tm["actor"] + tm["cross_reply"]
                replies = [m["metadata"]["timings"]["reply"] for m in body["agentMessages"] if m["replyKind"] == "primary"]
                sequential = tm["intent"] + tm["emotion"] + tm["select"] + sum(replies) + tm["cross_reply"]
                totals.append(wall)
                actors.append(len(replies))
                ratios_cp.append(wall / critical)
                ratios_seq.append(wall / sequential)
    srt = sorted(ratios_cp)
    return {"latency_ms": latency_ms, "turn": summarize(totals, sum(totals) / 1000),
            "mean_primary_replies": round(sum(actors) / len(actors), 2),
            "ratio_to_critical_path_median": round(srt[len(srt) // 2], 3),
            "ratio_to_sequential_median": round(sorted(ratios_seq)[len(ratios_seq) // 2], 3)}  # fmt: skip


async def overhead_run(turns: int, data_dir: str, database_url: str | None) -> dict[str, object]:
    from app.llm.fakes import FunctionModel

    emotion = {"primaryEmotion": "sad", "intensity": 0.6, "needsComfort": True, "needsAdvice": False,
               "needsDeescalation": False, "socialEnergy": "low", "reason": "r"}  # fmt: skip
    answers = {"intent": {"kind": "address_all", "addressedAgentIds": [], "wantsMultipleVoices": True},
               "emotion": emotion, "select": None, "cross_reply.plan": {"reply": None, "reason": "no"}}  # fmt: skip
    counter = iter(range(10**9))

    def answer(req):  # noqa: ANN001, ANN202
        if req.purpose in ("actor", "cross_reply"):
            return f"我在这里，第{next(counter)}次回复。"
        if req.purpose == "select":
            ids = [line.split("id=")[1].split(")")[0] for line in req.messages[1].content.splitlines() if "(id=" in line]
            return {"selectedAgentIds": ids[:2], "reason": "ok"}
        return answers[req.purpose]

    env = {"COMPANION_DATA_DIR": data_dir, "COMPANION_JWT_SECRET": SECRET}
    if database_url:
        env["COMPANION_DATABASE_URL"] = database_url
        from app.db.migrate import upgrade

        await upgrade(database_url)
    settings = load_settings(env)
    cpu, wall = [], []
    async with AsyncTestClient(create_app(settings, model=FunctionModel(answer)), timeout=60) as client:
        conv = await _group(client)
        for i in range(turns + 5):
            c, t = time.process_time(), time.perf_counter()
            resp = await client.post(f"/v1/conversations/{conv}/turns", json={"content": TEXTS[i % 3]}, headers=USER)
            assert resp.status_code == 201, resp.text
            if i >= 5:  # warm-up
                cpu.append((time.process_time() - c) * 1000)
                wall.append((time.perf_counter() - t) * 1000)
    cpu.sort()
    return {"cpu_ms_p50": round(cpu[len(cpu) // 2], 2), "cpu_ms_p95": round(cpu[int(len(cpu) * 0.95)], 2),
            "wall": summarize(wall, sum(wall) / 1000)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--postgres", default=os.environ.get("COMPANION_TEST_POSTGRES_URL"))
    args = parser.parse_args()
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        out["simulator"] = asyncio.run(simulator_run(args.turns, args.latency_ms, tmp))
    with tempfile.TemporaryDirectory() as tmp:
        out["overhead_sqlite"] = asyncio.run(overhead_run(args.turns * 3, tmp, None))
    if args.postgres:
        with tempfile.TemporaryDirectory() as tmp, postgres_database(args.postgres) as url:
            out["overhead_postgresql"] = asyncio.run(overhead_run(args.turns * 3, tmp, url))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
