"""Benchmark: group turns, as the user feels them.

1. A real ``companion serve`` process (SQLite, and PostgreSQL when a URL is given) against the
   LLM simulator (``companion simulate-llm``, its own process as a model server is;
   ``--simulator-in-thread`` runs it in the benchmark's process as before) over loopback: every call takes L ms (default 200) when not streamed; streamed
   calls (actor, cross reply) send their first token after L ms and then 50 tokens/s. A 3-agent
   group, reply limit 2, no suggestions. Each turn is posted as SSE and timed on arrival of:
   the first ``message.delta`` (first words on screen), the first ``message.created``, and
   ``turn.completed``. Scenarios: no mention (the LLM selector runs; speculation on), the user
   names an agent, and Story on (no mention). Ratios, each measured in the same run:
   first delta / L (and / one bare streamed call's first token, timed from this client straight to
   the simulator: what "one round trip" costs here before any server), first ``message.created``
   and ``turn.completed`` / the fully sequential pipeline (the sum of every model call of that turn, as the turn recorded them). Between turns
   the client waits ``--think-ms`` (default 1000: a user reads the reply and types), the time the
   background work after a turn (Story adoption) has in real use.
2. Orchestration overhead: CPU milliseconds per turn (JSON, no suggestions, no Story) with a
   zero-latency in-process fake, on SQLite and PostgreSQL (everything except model time: DB,
   scheduling, serialisation, the event log), the app served in the benchmark's event loop.

    python tests/perf/bench_turn.py [--turns 20] [--latency-ms 200] [--postgres URL]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import httpx  # noqa: E402

from app.auth.tokens import issue_token  # noqa: E402
from app.main import create_app  # noqa: E402
from app.settings import load_settings  # noqa: E402
from tests.perf._server import postgres_database, server, simulator_process, summarize, token  # noqa: E402

SECRET = "bench-secret-" + "x" * 32
ADMIN = {"Authorization": "Bearer " + issue_token(SECRET, "admin", admin=True, ttl_s=7200)}
USER = {"Authorization": "Bearer " + issue_token(SECRET, "bench", ttl_s=7200)}
TEXTS = ["大家怎么看？我今天好难过", "你们觉得我该不该换工作？", "大家好呀，今天有什么好玩的？"]
NAMED = ["周衡，你怎么看？我今天好难过", "周衡，我该不该换工作？", "周衡，今天有什么好玩的？"]


async def _group(client: Any, admin: dict[str, str], user: dict[str, str], story: bool = False,
                 orchestration: str = "staged", suggestions: bool = False) -> str:  # fmt: skip
    caps = [{"comfort": 0.9}, {"analysis": 0.9}, {"playful": 0.9}]
    ids = [(await client.post("/v1/agents", json={"name": n, "capabilities": c}, headers=admin)).json()["id"]
           for n, c in zip(["莉娅", "周衡", "小跳"], caps, strict=True)]  # fmt: skip
    settings: dict[str, Any] = {"replyLimit": 2, "autoReply": {"enabled": suggestions}, "orchestration": orchestration}
    if story:
        settings["story"] = {"enabled": True, "modelConfigId": "default"}
    body = {"kind": "group", "agentIds": ids, "settings": settings}
    return (await client.post("/v1/conversations", json=body, headers=user)).json()["id"]


def _pcts(values: list[float], digits: int = 1) -> dict[str, float]:
    s = sorted(values) or [0.0]
    return {"p50": round(s[len(s) // 2], digits), "p95": round(s[min(len(s) - 1, int(len(s) * 0.95))], digits)}


async def _timed_turn(client: httpx.AsyncClient, conv: str, text: str, user: dict[str, str]) -> dict[str, Any]:
    marks: dict[str, float] = {}
    result: dict[str, Any] = {}
    t0 = time.perf_counter()
    async with client.stream("POST", f"/v1/conversations/{conv}/turns", json={"content": text},
                             headers={**user, "accept": "text/event-stream"}) as resp:  # fmt: skip
        assert resp.status_code == 201, resp.status_code
        event = None
        async for line in resp.aiter_lines():
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
                marks.setdefault(event, (time.perf_counter() - t0) * 1000)
            elif line.startswith("data:") and event in ("turn.completed", "turn.failed"):
                result = json.loads(line.split(":", 1)[1])
    if result.get("more"):  # the late parts (suggestions) ran: their calls are in the stored cost
        stored = await client.get(f"/v1/conversations/{conv}/turns/{result['turnId']}", headers=user)
        late = (stored.json().get("orchestration") or {}).get("cost")
        if late and late.get("includesLate"):
            result["orchestration"]["cost"] = late
    tm = result["orchestration"]["timings"]
    cost = result["orchestration"].get("cost") or {}
    replies = [m["metadata"]["timings"]["reply"] for m in result["agentMessages"]]
    # Story model time: the prepare in front of the actor and the settle pass beside it.
    story = sum((s.get("prepareMs") or 0.0) + (s.get("besideMs") or 0.0)
                for s in ((m["metadata"].get("story") or {}) for m in result["agentMessages"]))
    # combined: intent and emotion record the same one call
    understanding = tm["intent"] if result["orchestration"].get("mode") == "combined" else tm["intent"] + tm["emotion"]
    sequential = understanding + tm["select"] + sum(replies) + tm["cross_reply"] + story
    return {"status": result["status"], "delta": marks.get("message.delta"), "created": marks.get("message.created"),
            "completed": marks.get("turn.completed"), "sequential": sequential, "calls": cost.get("modelCalls"),
            "calls_before_first_token": cost.get("callsBeforeFirstToken"),
            "by_stage": {k: v["calls"] for k, v in (cost.get("byStage") or {}).items()},
            "speculation": [m["metadata"].get("speculation") for m in result["agentMessages"]
                            if m["replyKind"] == "primary"]}  # fmt: skip


async def bare_call_ms(sim_url: str, calls: int = 12) -> float:
    """p50 first-token time of one streamed call from this client straight to the simulator."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=sim_url, api_key="bench")
    messages = [{"role": "system", "content": "你是周衡，群聊里的一位伙伴。"}, {"role": "user", "content": NAMED[0]}]
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        stream = await client.chat.completions.create(model="simulator", messages=messages, stream=True)
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                times.append((time.perf_counter() - t0) * 1000)
                break
        await stream.close()
        await asyncio.sleep(0.05)
    await client.close()
    return _pcts(times[2:], 1)["p50"]


async def _scenario(base: str, turns: int, latency_ms: float, *, named: bool, story: bool, think_ms: float,
                    orchestration: str = "staged", suggestions: bool = False,
                    bare_ms: float | None = None) -> dict[str, Any]:  # fmt: skip
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        admin, user = token("admin", admin=True), token(f"bench-{named}-{story}-{orchestration}-{suggestions}")
        conv = await _group(client, admin, user, story=story, orchestration=orchestration, suggestions=suggestions)
        rows = []
        for i in range(turns + 2):
            row = await _timed_turn(client, conv, (NAMED if named else TEXTS)[i % 3], user)
            if i >= 2:  # warm-up
                rows.append(row)
            await asyncio.sleep(think_ms / 1000)
    ok = [r for r in rows if r["status"] == "completed" and r["delta"] is not None]
    specs = [s for r in rows for s in r["speculation"]]
    return {
        "turns": len(rows), "completed": len(ok),
        "first_delta_ms": _pcts([r["delta"] for r in ok]),
        "first_message_created_ms": _pcts([r["created"] for r in ok]),
        "turn_completed_ms": _pcts([r["completed"] for r in ok]),
        "sequential_pipeline_ms": _pcts([r["sequential"] for r in ok]),
        "ratio_first_delta_to_call": _pcts([r["delta"] / latency_ms for r in ok], 3),
        "ratio_first_delta_to_bare_call": _pcts([r["delta"] / (bare_ms or latency_ms) for r in ok], 3),
        "ratio_first_created_to_sequential": _pcts([r["created"] / r["sequential"] for r in ok], 3),
        "ratio_completed_to_sequential": _pcts([r["completed"] / r["sequential"] for r in ok], 3),
        "speculation": {k: specs.count(k) for k in ("hit", "miss", "none")},
        "model_calls_per_turn": _pcts([r["calls"] for r in ok if r["calls"] is not None], 1),
        "calls_before_first_token": _pcts([r["calls_before_first_token"] for r in ok
                                           if r["calls_before_first_token"] is not None], 1),
        "calls_by_stage_mean": _mean_by_stage([r["by_stage"] for r in ok]),
    }  # fmt: skip


def _mean_by_stage(rows: list[dict[str, int]]) -> dict[str, float]:
    stages = sorted({k for r in rows for k in r})
    return {k: round(sum(r.get(k, 0) for r in rows) / max(1, len(rows)), 2) for k in stages}


@contextlib.contextmanager
def _simulator(latency_ms: float, in_thread: bool) -> Iterator[str]:
    if not in_thread:
        with simulator_process(latency_ms, latency_ms, 50.0, seed=1) as base_url:
            yield base_url
        return
    from app.llm.simulator import start_simulator_in_thread

    with start_simulator_in_thread(latency_ms=latency_ms, ttft_ms=latency_ms, tokens_per_s=50.0, seed=1) as sim:
        yield sim.base_url


SCENARIOS = (("no_mention", False, False, "staged", False), ("named_agent", True, False, "staged", False),
             ("story_on", False, True, "staged", False),
             ("no_mention_combined", False, False, "combined", False),
             ("named_agent_combined", True, False, "combined", False),
             ("suggestions_on_staged", False, False, "staged", True),
             ("suggestions_on_combined", False, False, "combined", True))


def simulator_run(turns: int, latency_ms: float, database_url: str | None, think_ms: float,
                  in_thread: bool = False, only: tuple[str, ...] = ()) -> dict[str, Any]:  # fmt: skip
    with _simulator(latency_ms, in_thread) as sim_url:
        env = {"COMPANION_LLM_BASE_URL": sim_url, "COMPANION_LLM_MODEL": "simulator"}
        bare = asyncio.run(bare_call_ms(sim_url))
        with server(database_url, env) as base:
            out = {name: asyncio.run(_scenario(base, turns if not late else max(4, turns // 2), latency_ms,
                                               named=named, story=story, think_ms=think_ms, orchestration=mode,
                                               suggestions=late, bare_ms=bare))
                   for name, named, story, mode, late in SCENARIOS if not only or name in only}
    if "story_on" in out and "no_mention" in out:
        out["story_added_first_delta_ms_p50"] = round(
            out["story_on"]["first_delta_ms"]["p50"] - out["no_mention"]["first_delta_ms"]["p50"], 1)
        out["story_added_first_delta_in_calls"] = round(out["story_added_first_delta_ms_p50"] / latency_ms, 3)
    out["latency_ms_per_call (simulated)"] = latency_ms
    out["bare_streamed_call_first_token_ms_p50"] = bare
    out["think_ms_between_turns"] = think_ms
    out["streamed_calls"] = {"ttft_ms": latency_ms, "tokens_per_s": 50.0}
    out["simulator"] = "in the benchmark's process (a thread)" if in_thread else "its own process (companion simulate-llm)"
    return out


def python_loop_ms() -> float:
    """CPU time of a fixed pure-Python loop (a million multiply-adds). This VM's speed drifts by
    up to 1.6x from minute to minute, so a CPU figure is comparable only next to this one."""
    t, total = time.process_time(), 0
    for i in range(1_000_000):
        total += i * i
    return round((time.process_time() - t) * 1000, 1)


# Short phrases a reply is drawn from: a fixed reply, or one that differs only by a number, is a
# repeat of the window (``repeats_earlier``) from the second turn on, and every such turn failed
# with all its replies dropped: the overhead was then measured on failed turns.
_PHRASES = ("我懂你", "慢慢来", "先喝口水", "听起来不容易", "我们一起想", "明天再说", "深呼吸", "别着急",
            "这很正常", "你已经很棒", "说说看", "我在听", "换个角度", "休息一下", "写下来", "出去走走")


def _varied_reply(rng: random.Random) -> str:
    return "，".join(rng.sample(_PHRASES, 5)) + "。"


async def overhead_run(turns: int, data_dir: str, database_url: str | None) -> dict[str, object]:
    from app.llm.fakes import FunctionModel

    emotion = {"primaryEmotion": "sad", "intensity": 0.6, "needsComfort": True, "needsAdvice": False,
               "needsDeescalation": False, "socialEnergy": "low", "reason": "r"}  # fmt: skip
    answers = {"intent": {"kind": "address_all", "addressedAgentIds": [], "wantsMultipleVoices": True},
               "emotion": emotion, "select": None, "cross_reply.plan": {"reply": None, "reason": "no"}}  # fmt: skip
    rng = random.Random(7)

    def answer(req):  # noqa: ANN001, ANN202
        if req.purpose in ("actor", "cross_reply"):
            return _varied_reply(rng)
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
    cpu, wall, completed = [], [], 0
    app = create_app(settings, model=FunctionModel(answer))
    # In the benchmark's own event loop (no test-client thread): CPU time is the app's and httpx's.
    async with app.lifespan(), httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        conv = await _group(client, ADMIN, USER)
        for i in range(turns + 5):
            c, t = time.process_time(), time.perf_counter()
            resp = await client.post(f"/v1/conversations/{conv}/turns", json={"content": TEXTS[i % 3]}, headers=USER)
            assert resp.status_code == 201, resp.text
            if i >= 5:  # warm-up
                cpu.append((time.process_time() - c) * 1000)
                wall.append((time.perf_counter() - t) * 1000)
                completed += resp.json()["status"] == "completed"
    cpu.sort()
    return {"turns": len(cpu), "completed": completed,
            "cpu_ms_p50": round(cpu[len(cpu) // 2], 2), "cpu_ms_p95": round(cpu[int(len(cpu) * 0.95)], 2),
            "python_loop_ms": python_loop_ms(), "wall": summarize(wall, sum(wall) / 1000)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--postgres", default=os.environ.get("COMPANION_TEST_POSTGRES_URL"))
    parser.add_argument("--think-ms", type=float, default=1000.0)
    parser.add_argument("--skip-simulator", action="store_true")
    parser.add_argument("--simulator-in-thread", action="store_true",
                        help="run the simulator in this process, as before (its CPU then shares the client's interpreter)")
    parser.add_argument("--only", action="append", default=[], choices=[s[0] for s in SCENARIOS],
                        help="run only this simulator scenario (repeatable); skips the overhead run")
    args = parser.parse_args()
    out: dict[str, object] = {}
    only = tuple(args.only)
    if not args.skip_simulator:
        out["simulator_sqlite"] = simulator_run(args.turns, args.latency_ms, None, args.think_ms, args.simulator_in_thread,
                                                only)  # fmt: skip
        if args.postgres:
            with postgres_database(args.postgres) as url:
                out["simulator_postgresql"] = simulator_run(args.turns, args.latency_ms, url, args.think_ms,
                                                            args.simulator_in_thread, only)  # fmt: skip
    if only:
        print(json.dumps(out, indent=2))
        return
    with tempfile.TemporaryDirectory() as tmp:
        out["overhead_sqlite"] = asyncio.run(overhead_run(args.turns * 3, tmp, None))
    if args.postgres:
        with tempfile.TemporaryDirectory() as tmp, postgres_database(args.postgres) as url:
            out["overhead_postgresql"] = asyncio.run(overhead_run(args.turns * 3, tmp, url))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
