"""Benchmark: auto-reply suggestions against the LLM simulator (never a real model).

1. Generator: ``generate_suggestions`` through the real ``ModelGateway`` over loopback HTTP at a
   fixed model latency. Reports p50/p95 latency, first-try validity (valid on attempt 1), repair
   rate (valid on attempt 2 or 3), failure rate and mean attempts.
2. Endpoint: ``POST /v1/conversations/{id}/messages/{messageId}/suggestions`` through the whole
   app (HTTP, DB reads, the suggestions row) on embedded SQLite, same simulator.

The generator sends the one wire schema (``app.llm.schema.wire_schema`` of ``SuggestionOptions``
with exactly ``suggestionCount`` options, each at most ``maxSuggestionChars`` characters) and
repairs through the one loop (``complete_struct``, at most three attempts). The simulator answers
with a random instance of that schema in the prompt's language, so without faults every answer
should be valid on the first try; ``--fault-rate`` injects invalid JSON, schema violations and
empty answers to measure the repair loop. Validity here measures the wire and the loop, not a
real model's quality.

    python tests/perf/bench_auto_reply.py [--runs 60] [--latency-ms 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.llm.config import load_llm_settings  # noqa: E402
from app.llm.gateway import ModelGateway  # noqa: E402
from app.llm.simulator import start_simulator_in_thread  # noqa: E402
from story.auto_reply import (  # noqa: E402
    Anchor, AutoReplyConfig, AutoReplyGenerationFailed, ContextMessage, SuggestionInput, generate_suggestions,
)  # fmt: skip

SECRET = "bench-secret-" + "x" * 32
INPUT = SuggestionInput(
    anchor=Anchor(id="a2", content="守卫伸出手：“手令呢？没有手令谁也不能进城。”", agent_name="守卫",
                  agent_description="城门守卫，严肃但讲道理"),
    language="zh-CN", latest_user_input="我想进城找我的朋友。",
    context=[ContextMessage("User", "user", "你好，这里是北门吗？", "u1"), ContextMessage("守卫", "agent", "是北门。天黑前关门。", "a1"),
             ContextMessage("User", "user", "我想进城找我的朋友。", "u2")],
)  # fmt: skip


class Run:
    """One generation: wall time, model attempts, whether valid options came back."""

    def __init__(self, ms: float, attempts: int, ok: bool, problems: list[list[str]] | None = None) -> None:
        self.ms, self.attempts, self.ok, self.problems = ms, attempts, ok, problems or []


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values) or [0.0]
    return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 1)


def figures(runs: list[Run]) -> dict[str, object]:
    n, ms = len(runs), [r.ms for r in runs]
    first = [r.ms for r in runs if r.ok and r.attempts == 1]
    return {
        "runs": n, "p50_ms": pct(ms, 0.50), "p95_ms": pct(ms, 0.95), "max_ms": pct(ms, 1.0),
        "mean_ms": round(statistics.fmean(ms), 1), "first_try_p50_ms": pct(first, 0.50) if first else None,
        "first_try_valid": round(sum(r.ok and r.attempts == 1 for r in runs) / n, 3),
        "repair_rate": round(sum(r.ok and r.attempts > 1 for r in runs) / n, 3),
        "failure_rate": round(sum(not r.ok for r in runs) / n, 3),
        "mean_attempts": round(statistics.fmean(r.attempts for r in runs), 2),
        "problems_attempt_1": _kinds(r.problems[:1] and r.problems[0] for r in runs),
        "problems_on_repairs": _kinds(p for r in runs for p in r.problems[1:]),
    }  # fmt: skip


def _kinds(problem_lists) -> dict[str, int]:
    """Problem counts by kind ("option 2: wrong script ..." and "option 1: ..." are one kind)."""
    counts: Counter[str] = Counter()
    for problems in problem_lists:
        for problem in problems:
            counts[re.sub(r"\d+", "N", re.sub(r"^option \d+: ", "", problem))[:60]] += 1
    return dict(counts.most_common(5))


async def generator_run(base_url: str, n: int) -> dict[str, object]:
    env = {"COMPANION_LLM_BASE_URL": base_url, "COMPANION_LLM_MODEL": "sim"}
    gateway = ModelGateway(load_llm_settings(env, {}), env=env)
    runs: list[Run] = []
    try:
        for _ in range(n):
            t = time.perf_counter()
            try:
                result = await generate_suggestions(gateway, INPUT, AutoReplyConfig())
                attempts, ok, problems = len(result.attempts), True, [a.problems for a in result.attempts]
            except AutoReplyGenerationFailed as exc:
                attempts, ok, problems = exc.attempts, False, exc.problems_per_attempt
            runs.append(Run((time.perf_counter() - t) * 1000, attempts, ok, problems))
    finally:
        await gateway.aclose()
    return figures(runs)


async def endpoint_run(base_url: str, n: int, data_dir: str, after_seed=lambda: None) -> dict[str, object]:
    from litestar.testing import AsyncTestClient

    from app.auth.tokens import issue_token
    from app.main import create_app
    from app.settings import load_settings

    admin = {"Authorization": "Bearer " + issue_token(SECRET, "admin", admin=True, ttl_s=7200)}
    user = {"Authorization": "Bearer " + issue_token(SECRET, "bench", ttl_s=7200)}
    settings = load_settings({"COMPANION_DATA_DIR": data_dir, "COMPANION_JWT_SECRET": SECRET,
                              "COMPANION_LLM_BASE_URL": base_url, "COMPANION_LLM_MODEL": "sim"})  # fmt: skip
    runs: list[Run] = []
    async with AsyncTestClient(create_app(settings), timeout=120) as client:
        agent = (await client.post("/v1/agents", json={"name": "守卫"}, headers=admin)).json()["id"]
        body = {"kind": "direct", "agentIds": [agent], "settings": {"autoReply": {"enabled": True}}}
        conv = (await client.post("/v1/conversations", json=body, headers=user)).json()["id"]
        turn = (await client.post(f"/v1/conversations/{conv}/turns", json={"content": "我想进城找我的朋友。"}, headers=user)).json()
        if not turn.get("agentMessages"):
            raise SystemExit(f"the seeding turn produced no agent message: {turn.get('error')}")
        url = f"/v1/conversations/{conv}/messages/{turn['agentMessages'][-1]['id']}/suggestions"
        after_seed()
        for _ in range(n):
            t = time.perf_counter()
            resp = await client.post(url, headers=user)
            ms = (time.perf_counter() - t) * 1000
            latest = (await client.get(f"/v1/conversations/{conv}/suggestions/latest", headers=user)).json()
            runs.append(Run(ms, latest["attempts"], resp.status_code == 201, latest["problems"]))
    return figures(runs)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--fault-rate", type=float, default=0.0,
                        help="share of simulator answers that are invalid JSON / schema violations / empty")
    args = parser.parse_args()
    logging.getLogger("app.errors").setLevel(logging.ERROR)  # expected 502s are counted, not logged
    faults = ("invalid_json", "schema_violation", "empty")
    with start_simulator_in_thread(latency_ms=args.latency_ms, seed=1) as sim, tempfile.TemporaryDirectory() as tmp:
        sim.configure(fault_rate=args.fault_rate, faults=faults)
        generator = await generator_run(sim.base_url, args.runs)
        sim.configure(fault_rate=0.0)  # the endpoint run seeds a turn first, then measures with faults
        endpoint = await endpoint_run(sim.base_url, args.runs, tmp, lambda: sim.configure(fault_rate=args.fault_rate))
        report = {
            "simulator_latency_ms": args.latency_ms,
            "fault_rate": args.fault_rate,
            "generator": generator,
            "endpoint_sqlite": endpoint,
            "simulator": sim.stats(),
        }
    print(json.dumps(report, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
