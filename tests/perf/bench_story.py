"""Benchmark: Story.

1. Mechanical prepare + deal + projection per turn (pure: host-provided intent, no model).
2. State size after 200 turns through the coordinator with the Story really running: every
   Story call goes over HTTP to the schema-following simulator (init, plan, prepare, advance,
   settle from the schema each request sends); must stay under the 60,000-byte cap. Reports how
   many turns wrote state and how many Story calls needed a repair or failed.
3. Added latency of Story on a group turn: the real app on SQLite against the simulator at a
   fixed latency L per model call (labelled simulated), Story on vs off, with the Story outcome.
4. The long-roleplay target (issue 14): 500 turns of 2,000-character user messages and replies,
   with settlement answering "unknown" one turn in three, through the coordinator against the
   simulator and the real ``finalize_turn`` at the 60,000-byte cap, the host's part emulated
   (quarantine records leave with each save, failures in a row are passed back). Target: never
   over the cap (no ``state_too_large``), never stalled (every turn writes state).

    python tests/perf/bench_story.py [--turns 200] [--latency-ms 100] [--group-turns 10] [--long-turns 500]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from story.coordinator.turn import BeforeActorInput, StoryCoordinator, finalize_turn  # noqa: E402
from story.coordinator.initializer import PersonaSource  # noqa: E402
from story.coordinator.recovery import HistoryMessage  # noqa: E402
from story.tools.common import StoryContext, StoryModelConfig  # noqa: E402
from story.tools.deal_beat import DealInput, NarrativeDealBeatTool  # noqa: E402
from story.tools.prepare_turn import PovPrepareTurnTool, PrepareAction, PrepareInput  # noqa: E402
from story.world.stage import project_stage  # noqa: E402
from story.world.types import Intent  # noqa: E402
from tests.integration.story.conftest import ADV, INIT, NORMAL, PLAN  # noqa: E402
from tests.unit.story.builders import goal, narrative, world  # noqa: E402
from tests.unit.story.fakes import MemoryReader  # noqa: E402
from app.llm.config import load_llm_settings  # noqa: E402
from app.llm.gateway import ModelGateway  # noqa: E402
from app.llm.simulator import start_simulator_in_thread  # noqa: E402
from app.llm.structured import Structured  # noqa: E402

ANSWERS = {"story_init.world": INIT, "story.prepare": NORMAL, "story.plan_cycle": PLAN, "story.advance": ADV,
           "story.settle": {"status": "assessed", "emotion": None, "new_pursuit": "", "line_progress": [],
                            "completed_goals": []}}  # fmt: skip


class _Fake(Structured):
    def __init__(self, latency_s: float = 0.0) -> None:
        self.latency_s = latency_s

    async def complete(self, request):  # noqa: ANN001
        from tests.unit.story.fakes import FakeResult

        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        return FakeResult(json.dumps(ANSWERS[request.purpose]))


async def mechanical(turns: int) -> dict[str, float]:
    prepare, deal = PovPrepareTurnTool(StoryModelConfig(_Fake())), NarrativeDealBeatTool()
    w, n = world(), narrative([goal(f"g{i}") for i in range(6)])
    times = []
    for i in range(turns):
        ctx = StoryContext(f"r{i}", f"t{i}")
        t0 = time.perf_counter()
        prep = await prepare.execute(PrepareInput(ctx, w, PrepareAction("intent", "继续", Intent())))
        dealt = await deal.execute(DealInput(ctx, n, prep.stage.event.phase))
        project_stage(prep, dealt.packet.bias.prefer_background_kind)
        times.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": round(statistics.median(times), 3), "p95_ms": round(sorted(times)[int(len(times) * 0.95) - 1], 3)}


def _sim_env(base_url: str) -> dict[str, str]:
    return {"COMPANION_LLM_BASE_URL": base_url, "COMPANION_LLM_MODEL": "simulator", "COMPANION_LLM_TIMEOUT_MS": "10000"}


async def state_size(turns: int, base_url: str) -> dict[str, Any]:
    reader = MemoryReader()
    env = _sim_env(base_url)
    gateway = ModelGateway(load_llm_settings(env, {}), env=env)
    coord = StoryCoordinator(StoryModelConfig(gateway, timeout_s=10), reader)
    persona = PersonaSource("莉娅", "莉娅负责城门登记。", "你们站在城门口。")
    saved, history, sizes = None, [], []
    diagnostics: dict[str, int] = {}
    for i in range(turns):
        user_id, agent_msg = f"u{i}", f"a{i}"
        user_text = f"第{i}句：我把铜钥匙递给莉娅，看看城门口有什么动静。"
        res = await coord.before_actor(BeforeActorInput(StoryContext(f"r{i}", f"{user_id}:lia"), "lia", persona, saved,
                                                        user_id, user_text, 2 * i + 1, history[-18:]))
        for d in res.diagnostics:
            diagnostics[d.code] = diagnostics.get(d.code, 0) + 1
        reply = f"莉娅接过钥匙，看向城门口。第{i}句，她说：巡逻队快回来了。"
        if res.write:
            reader.put(agent_msg, reply)
            fin = finalize_turn(res, agent_msg, user_id, user_text, max_state_bytes=10**9)
            saved = fin.payload
            sizes.append(len(saved))
        history += [HistoryMessage(user_id, "user", user_text), HistoryMessage(agent_msg, "agent", reply, "lia")]
    await gateway.aclose()
    return {"turns": turns, "turns_that_wrote_state": len(sizes), "final_bytes": sizes[-1] if sizes else 0,
            "max_bytes": max(sizes, default=0), "cap": 60_000,
            "first_turn_over_cap": next((i + 1 for i, n in enumerate(sizes) if n > 60_000), None),
            "bytes_at_turn": {t: sizes[t - 1] for t in (10, 50, 100, 150, 200) if t <= len(sizes)},
            "diagnostics": diagnostics,
            "model": "simulator (schema-following, labelled simulated)"}  # fmt: skip


class _UnknownEveryThird(Structured):
    """The simulator for every Story call, except the settlement of every third turn: "unknown"."""

    UNKNOWN = {"status": "unknown", "completed_goals": [], "line_progress": [], "emotion": None, "new_pursuit": ""}

    def __init__(self, inner: Any) -> None:
        self.inner, self.turn = inner, 0

    async def complete(self, request):  # noqa: ANN001
        from tests.unit.story.fakes import FakeResult

        if request.purpose == "story.settle" and self.turn % 3 == 0:
            return FakeResult(json.dumps(self.UNKNOWN))
        return await self.inner.complete(request)


async def long_roleplay(turns: int, base_url: str, cap: int = 60_000) -> dict[str, Any]:
    reader = MemoryReader()
    env = _sim_env(base_url)
    gateway = ModelGateway(load_llm_settings(env, {}), env=env)
    model = _UnknownEveryThird(gateway)
    coord = StoryCoordinator(StoryModelConfig(model, timeout_s=10), reader)
    persona = PersonaSource("莉娅", "莉娅负责城门登记。", "你们站在城门口。")
    saved, history, sizes, times = None, [], [], []
    statuses: dict[str, int] = {}
    diagnostics: dict[str, int] = {}
    failures, streak, longest_streak, quarantined = 0, 0, 0, 0
    body = "我把铜钥匙递给莉娅，仔细描述徽记上的每一道刻痕，又讲起城门口巡逻队的动静。"  # 38 characters
    for i in range(turns):
        model.turn = i
        user_id, agent_msg = f"u{i}", f"a{i}"
        user_text = (f"第{i}句：" + body * 60)[:2000]
        reply = (f"莉娅接过钥匙（第{i}句），她说：巡逻队快回来了。" + "她低头看着徽记，沉默了很久，然后望向城门。" * 100)[:2000]
        t0 = time.perf_counter()
        res = await coord.before_actor(BeforeActorInput(StoryContext(f"r{i}", f"{user_id}:lia"), "lia", persona, saved,
                                                        user_id, user_text, 2 * i + 1, history[-18:],
                                                        prior_failures=failures))  # fmt: skip
        for d in res.diagnostics:
            diagnostics[d.code] = diagnostics.get(d.code, 0) + 1
        reader.put(user_id, user_text, None)
        reader.put(agent_msg, reply)
        status = "not_written"
        if res.write:
            fin = finalize_turn(res, agent_msg, user_id, user_text, max_state_bytes=cap)
            status = fin.status
            for d in fin.diagnostics:
                diagnostics[d.code] = diagnostics.get(d.code, 0) + 1
            if fin.payload is not None:
                saved = fin.payload
                sizes.append(len(saved))
                quarantined += len(res.candidate.quarantine)  # the host stores these outside the state
        times.append((time.perf_counter() - t0) * 1000)
        statuses[status] = statuses.get(status, 0) + 1
        written = status == "waiting_for_acceptance"
        failures = 0 if written else failures + 1
        streak = 0 if written else streak + 1
        longest_streak = max(longest_streak, streak)
        history += [HistoryMessage(user_id, "user", user_text), HistoryMessage(agent_msg, "agent", reply, "lia")]
    await gateway.aclose()
    return {"turns": turns, "message_chars": 2000, "settle_unknown": "every third turn", "cap": cap,
            "statuses": statuses, "max_bytes": max(sizes, default=0), "final_bytes": sizes[-1] if sizes else 0,
            "bytes_at_turn": {t: sizes[t - 1] for t in (10, 50, 100, 200, 300, 400, 500) if t <= len(sizes)},
            "over_cap": sum(1 for n in sizes if n > cap), "longest_run_without_a_write": longest_streak,
            "quarantined_records_moved_out": quarantined, "turn_ms_p50": round(statistics.median(times), 1),
            "turn_ms_p95": round(sorted(times)[int(len(times) * 0.95) - 1], 1), "diagnostics": diagnostics,
            "target_met": statuses.get("waiting_for_acceptance", 0) == turns and max(sizes, default=0) <= cap,
            "model": "simulator (schema-following, labelled simulated); settle 'unknown' injected every third turn"}


async def group_latency(turns: int, latency_ms: int) -> dict[str, Any]:
    from litestar.testing import AsyncTestClient

    from app.main import create_app
    from tests.integration.conftest import ADMIN, ALICE, make_settings

    handle = start_simulator_in_thread(latency_ms=latency_ms, seed=3)
    out: dict[str, Any] = {}
    try:
        for label, story in (("story_off", {"enabled": False}), ("story_on", {"enabled": True, "modelConfigId": "default"})):
            with tempfile.TemporaryDirectory() as tmp:
                settings = make_settings(f"sqlite+aiosqlite:///{tmp}/bench.db", Path(tmp), **_sim_env(handle.base_url))
                async with AsyncTestClient(create_app(settings), timeout=120) as c:
                    ids = [(await c.post("/v1/agents", json={"name": n}, headers=ADMIN)).json()["id"]
                           for n in ("莉娅", "周衡", "小跳")]  # fmt: skip
                    conv = (await c.post("/v1/conversations", json={"kind": "direct", "agentIds": ids[:1], "settings": {
                        "story": story}}, headers=ALICE)).json()  # fmt: skip
                    times, outcomes = [], {}
                    for i in range(turns):
                        t0 = time.perf_counter()
                        r = await c.post(f"/v1/conversations/{conv['id']}/turns", json={"content": f"第{i}句：你好"},
                                         headers=ALICE)  # fmt: skip
                        assert r.status_code == 201, r.text
                        times.append((time.perf_counter() - t0) * 1000)
                        for m in r.json()["agentMessages"]:
                            o = (m["metadata"].get("story") or {}).get("outcome", "none")
                            outcomes[o] = outcomes.get(o, 0) + 1
            out[label] = {"p50_ms": round(statistics.median(times), 1), "story_outcomes": outcomes}
        out["added_ms_p50"] = round(out["story_on"]["p50_ms"] - out["story_off"]["p50_ms"], 1)
        out["latency_ms_per_call (simulated)"] = latency_ms
    finally:
        handle.stop()
    return out


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--latency-ms", type=int, default=100)
    ap.add_argument("--group-turns", type=int, default=10)
    ap.add_argument("--long-turns", type=int, default=500)
    ap.add_argument("--only-long", action="store_true", help="run only the long-roleplay target")
    a = ap.parse_args()
    import logging

    logging.disable(logging.INFO)
    handle = start_simulator_in_thread(latency_ms=0, seed=5)
    try:
        long_run = await long_roleplay(a.long_turns, handle.base_url)
        size = None if a.only_long else await state_size(a.turns, handle.base_url)
    finally:
        handle.stop()
    if a.only_long:
        print(json.dumps({"long_roleplay": long_run}, ensure_ascii=False, indent=2))
        return
    report = {"mechanical_per_turn": await mechanical(a.turns), "state_size": size, "long_roleplay": long_run,
              "group_turn": await group_latency(a.group_turns, a.latency_ms)}  # fmt: skip
    print(json.dumps(report, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
