"""Benchmark: group turns against a simulator that fails a share of its answers (issue 33).

The LLM simulator (in this process's thread, over loopback) with ``--fault-rate`` (default 0.5)
and its whole fault mix (HTTP 500 and 429, hangs, invalid JSON, empty answers, schema
violations, streams cut half way); the app in this process on a fresh SQLite file, its
``default`` model config pointed at the simulator (``timeoutMs`` 15000; a hang lasts
``--hang-s`` = 5 s, then the simulator answers 504). The same seeded turns run twice: with
retries off (``retry.maxAttempts = 1``, circuit breaker off: the gateway as it was before
retries) and with the default retry and circuit settings. Reported per run: turns completed,
failed by error code (and the first reason each reply of a failed turn was dropped), turn time
p50/p95, the simulator's request and fault counts, and the gateway's retries by reason.

    python tests/perf/bench_model_faults.py [--turns 40] [--fault-rate 0.5] [--seed 7]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from litestar.testing import AsyncTestClient  # noqa: E402

from app.auth.tokens import issue_token  # noqa: E402
from app.llm.simulator import FAULT_KINDS, start_simulator_in_thread  # noqa: E402
from app.main import create_app  # noqa: E402
from app.metrics import REGISTRY  # noqa: E402
from app.settings import load_settings  # noqa: E402

SECRET = "bench-secret-" + "x" * 32
ADMIN = {"Authorization": "Bearer " + issue_token(SECRET, "admin", admin=True, ttl_s=7200)}
USER = {"Authorization": "Bearer " + issue_token(SECRET, "bench", ttl_s=7200)}
TEXTS = ["大家怎么看？我今天好难过", "你们觉得我该不该换工作？", "大家好呀，今天有什么好玩的？", "I had a rough day, any advice?"]
RETRIES_OFF = 'retry = { maxAttempts = 1 }\ncircuit = { failures = 0 }\n'


def _settings(base_url: str, data_dir: Path, extra_toml: str) -> Any:
    config = data_dir / "companion.toml"
    config.write_text(f'[llm.models.default]\nbaseUrl = "{base_url}"\nmodel = "sim"\ntimeoutMs = 15000\n{extra_toml}')
    return load_settings({"COMPANION_DATA_DIR": str(data_dir), "COMPANION_JWT_SECRET": SECRET,
                          "COMPANION_DATABASE_URL": f"sqlite+aiosqlite:///{data_dir / 'bench.db'}",
                          "COMPANION_CONFIG": str(config), "COMPANION_LOG_LEVEL": "ERROR"})  # fmt: skip


def _retries() -> dict[str, float]:
    """``companion_model_call_retries_total`` by reason, so far in this process."""
    out: dict[str, float] = {}
    for family in REGISTRY.collect():
        for sample in family.samples:
            if sample.name == "companion_model_call_retries_total":
                out[sample.labels["reason"]] = out.get(sample.labels["reason"], 0.0) + sample.value
    return out


async def _run(sim: Any, label: str, extra_toml: str, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(_settings(sim.base_url, Path(tmp), extra_toml))
        async with AsyncTestClient(app, timeout=300) as client:
            caps = [{"comfort": 0.9}, {"analysis": 0.9}, {"playful": 0.9}]
            ids = [(await client.post("/v1/agents", json={"name": n, "capabilities": c}, headers=ADMIN)).json()["id"]
                   for n, c in zip(["莉娅", "周衡", "小跳"], caps, strict=True)]  # fmt: skip
            body = {"kind": "group", "agentIds": ids, "settings": {"autoReply": {"enabled": False}}}
            conv = (await client.post("/v1/conversations", json=body, headers=USER)).json()["id"]
            sim.configure(fault_rate=args.fault_rate, faults=FAULT_KINDS, seed=args.seed, hang_s=args.hang_s)
            before, retries_before = sim.stats(), _retries()
            outcomes: collections.Counter[str] = collections.Counter()
            drops: collections.Counter[str] = collections.Counter()  # why the replies of failed turns were dropped
            seconds: list[float] = []
            for i in range(args.turns):
                started = time.perf_counter()
                resp = await client.post(f"/v1/conversations/{conv}/turns", json={"content": TEXTS[i % len(TEXTS)]},
                                         headers=USER)  # fmt: skip
                seconds.append(time.perf_counter() - started)
                turn = resp.json()
                status = turn.get("status") or f"http_{resp.status_code}"
                outcomes[status if status == "completed" else f"{status}:{(turn.get('error') or {}).get('code', turn.get('code'))}"] += 1
                for agent in ((turn.get("error") or {}).get("details") or {}).get("agents", []):
                    drops.update(reason[:90] for reason in agent.get("reasons", [])[:1])
            after, retries_after = sim.stats(), _retries()
            sim.configure(fault_rate=0.0)
    s = sorted(seconds)
    return {
        "run": label, "turns": args.turns, "completed": outcomes["completed"],
        "outcomes": dict(outcomes), "dropped_because": dict(drops.most_common(6)), "turn_s": {"p50": round(s[len(s) // 2], 2), "p95": round(s[int(len(s) * 0.95) - 1], 2)},
        "model_requests": after["requests"] - before["requests"],
        "faults": {k: after["faults"][k] - before["faults"][k] for k in FAULT_KINDS},
        "retries": {k: int(v - retries_before.get(k, 0.0)) for k, v in retries_after.items() if v - retries_before.get(k, 0.0)},
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--fault-rate", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--hang-s", type=float, default=5.0)
    args = parser.parse_args()
    sim = start_simulator_in_thread(latency_ms=0, seed=args.seed, hang_s=args.hang_s)
    try:
        results = [await _run(sim, "retries off", RETRIES_OFF, args), await _run(sim, "retries on (defaults)", "", args)]
    finally:
        sim.stop()
    print(json.dumps({"fault_rate": args.fault_rate, "seed": args.seed, "results": results}, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
