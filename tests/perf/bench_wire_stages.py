"""Benchmark: every structured model stage over the wire, per stage.

Runs group turns (zh and en, one with a mention, Story on for one agent, suggestions after each
turn) through the real app on SQLite against a model server reached over HTTP — the
schema-following simulator, or a real llama.cpp ``llama-server`` (``--target llama``, provisioned
by ``tests/realmodel/provision.py``) — and counts, per stage (the request's purpose): calls,
valid on the first answer, valid after a repair, failed (the caller then fell back), and the
latency of the structured call.

    python tests/perf/bench_wire_stages.py [--target sim|llama] [--turns 6] [--latency-ms 0]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from litestar.testing import AsyncTestClient  # noqa: E402

from app.db.migrate import upgrade  # noqa: E402
from app.llm.gateway import ModelGateway  # noqa: E402
from app.llm.structured import Structured, complete_struct  # noqa: E402
from app.main import create_app  # noqa: E402
from tests.integration.conftest import ADMIN, ALICE, make_settings  # noqa: E402

TEXTS_ZH = ["我今天有点难过", "帮我分析一下要不要换工作", "林溪，你还记得我们刚才说的吗？"]
TEXTS_EN = ["I feel a bit lonely tonight", "Can you all give me ideas for the weekend?", "@Heng is my plan realistic?"]


class Ledger(Structured):
    """The gateway, with every structured call counted by purpose."""

    def __init__(self, gateway: ModelGateway) -> None:
        self.gateway = gateway
        self.calls: dict[str, list[dict[str, Any]]] = defaultdict(list)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.gateway, name)

    async def complete(self, request: Any) -> Any:
        return await self.gateway.complete(request)

    async def complete_struct(self, request: Any, output_type: type, **options: Any) -> Any:
        started = time.perf_counter()
        record: dict[str, Any] = {"attempts": 0, "ok": False}
        try:
            outcome = await complete_struct(self, request, output_type, **options)
            record.update(attempts=len(outcome.attempts), ok=True)
            return outcome
        except Exception as exc:
            record.update(attempts=getattr(exc, "attempts", 0) or 0, error=getattr(exc, "code", type(exc).__name__))
            raise
        finally:
            record["ms"] = (time.perf_counter() - started) * 1000
            self.calls[request.purpose].append(record)


def summarize(calls: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    out = {}
    for purpose, records in sorted(calls.items()):
        n = len(records)
        first = sum(1 for r in records if r["ok"] and r["attempts"] == 1)
        repaired = sum(1 for r in records if r["ok"] and r["attempts"] > 1)
        errors = sorted({r["error"] for r in records if "error" in r})
        out[purpose] = {"n": n, "validFirstTryPct": round(100 * first / n, 1),
                        "repairedPct": round(100 * repaired / n, 1),
                        "failedPct": round(100 * (n - first - repaired) / n, 1),
                        "p50Ms": round(statistics.median(r["ms"] for r in records), 1), "errors": errors}  # fmt: skip
    return out


async def run(base_url: str, turns: int, timeout_ms: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = make_settings(f"sqlite+aiosqlite:///{tmp}/bench.db", Path(tmp), COMPANION_LLM_BASE_URL=base_url,
                                 COMPANION_LLM_MODEL="bench", COMPANION_LLM_TIMEOUT_MS=str(timeout_ms),
                                 COMPANION_TURN_TIMEOUT_S="900")  # fmt: skip
        await upgrade(settings.database_url)
        ledger = Ledger(ModelGateway(settings.llm))
        app = create_app(settings, model=ledger)
        statuses: dict[str, int] = defaultdict(int)
        async with AsyncTestClient(app, timeout=1800) as client:
            for language, names, texts in (("zh-CN", ("林溪", "周衡", "阿乐"), TEXTS_ZH),
                                           ("en", ("Lia", "Heng", "Joy"), TEXTS_EN)):  # fmt: skip
                ids = []
                for name, cap in zip(names, ("comfort", "analysis", "playful")):
                    r = await client.post("/v1/agents", json={"name": name, "capabilities": {cap: 0.95}}, headers=ADMIN)
                    ids.append(r.json()["id"])
                body = {"kind": "group", "agentIds": ids, "settings": {
                    "language": language, "story": {"enabled": True, "modelConfigId": "default",
                                                     "modelCallTimeoutMs": min(180_000, timeout_ms)}}}
                conv = (await client.post("/v1/conversations", json=body, headers=ALICE)).json()
                for i in range(turns):
                    r = await client.post(f"/v1/conversations/{conv['id']}/turns",
                                          json={"content": texts[i % len(texts)]}, headers=ALICE)  # fmt: skip
                    body = r.json()
                    statuses[body.get("status", str(r.status_code))] += 1
                    sug = body.get("suggestions") or {}
                    if sug:  # auto_reply runs inside the suggestions service: counted from its record
                        ok = sug.get("status") == "ready" and not sug.get("fallback")
                        statuses[f"auto_reply:{'ok' if ok else 'failed'}:attempts={sug.get('attempts')}"] += 1
                    report = (await client.get(f"/v1/conversations/{conv['id']}/story/{ids[0]}", headers=ALICE)).json()
                statuses[f"story:{language}:{report.get('status')}@{report.get('revision')}"] += 1
    return {"stages": summarize(ledger.calls), "turns": dict(statuses)}


async def main() -> None:
    import logging

    logging.disable(logging.INFO)
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=["sim", "llama"], default="sim")
    ap.add_argument("--turns", type=int, default=6, help="turns per language")
    ap.add_argument("--latency-ms", type=int, default=0, help="simulator latency per call")
    args = ap.parse_args()
    with contextlib.ExitStack() as stack:
        if args.target == "sim":
            from app.llm.simulator import start_simulator_in_thread

            handle = start_simulator_in_thread(latency_ms=args.latency_ms, seed=5)
            stack.callback(handle.stop)
            base, timeout_ms, label = handle.base_url, 10_000, "simulator (schema-following, labelled simulated)"
        else:
            from tests.realmodel.server import llama_server

            base = stack.enter_context(llama_server())
            timeout_ms, label = 120_000, "llama-server SmolLM2-135M-Instruct Q4_1, CPU"
        result = await run(base, args.turns, timeout_ms)
    print(json.dumps({"target": label, **result}, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
