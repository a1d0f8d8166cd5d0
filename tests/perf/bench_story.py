"""Benchmark: Story.

1. Mechanical prepare + deal + projection per turn (pure: host-provided intent, no model).
2. State size after 200 simulated turns through the coordinator (a zero-latency fake answers
   the Story JSON): must stay under the 60,000-byte cap.
3. Added latency of Story on a group turn: the real app on SQLite with an in-process fake at a
   fixed latency L per model call (labelled simulated), Story on vs off.

    python tests/perf/bench_story.py [--turns 200] [--latency-ms 100] [--group-turns 10]
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

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from story.coordinator.envelope import serialize_state  # noqa: E402
from story.coordinator.turn import BeforeActorInput, StoryCoordinator, finalize_turn  # noqa: E402
from story.coordinator.initializer import PersonaSource  # noqa: E402
from story.coordinator.recovery import HistoryMessage  # noqa: E402
from story.tools.common import StoryContext, StoryModelConfig  # noqa: E402
from story.tools.deal_beat import DealInput, NarrativeDealBeat  # noqa: E402
from story.tools.prepare_turn import PovPrepareTurn, PrepareAction, PrepareInput  # noqa: E402
from story.world.stage import project_stage  # noqa: E402
from story.world.types import Intent  # noqa: E402
from tests.integration.story.conftest import ADV, INIT, NORMAL, PLAN  # noqa: E402
from tests.unit.story.builders import goal, narrative, world  # noqa: E402
from tests.unit.story.fakes import MemoryReader  # noqa: E402

ANSWERS = {"story_init.world": INIT, "story.prepare": NORMAL, "story.plan_cycle": PLAN, "story.advance": ADV,
           "story.settle": {"status": "assessed", "emotion": None, "new_pursuit": "", "line_progress": [],
                            "completed_goals": []}}  # fmt: skip


class _Fake:
    def __init__(self, latency_s: float = 0.0) -> None:
        self.latency_s = latency_s

    async def complete(self, request):  # noqa: ANN001
        from tests.unit.story.fakes import FakeResult

        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        return FakeResult(json.dumps(ANSWERS[request.purpose]))


async def mechanical(turns: int) -> dict[str, float]:
    prepare, deal = PovPrepareTurn(StoryModelConfig(_Fake())), NarrativeDealBeat()
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


async def state_size(turns: int) -> dict[str, int]:
    reader = MemoryReader()
    coord = StoryCoordinator(StoryModelConfig(_Fake()), reader)
    persona = PersonaSource("莉娅", "莉娅负责城门登记。", "你们站在城门口。")
    saved, history, sizes = None, [], []
    for i in range(turns):
        user_id, agent_msg = f"u{i}", f"a{i}"
        res = await coord.before_actor(BeforeActorInput(StoryContext(f"r{i}", f"{user_id}:lia"), "lia", persona, saved,
                                                        user_id, f"第{i}句", 2 * i + 1, history[-18:]))
        if res.write:
            reader.put(agent_msg, f"莉娅回应第{i}句。")
            fin = finalize_turn(res, agent_msg, user_id, f"第{i}句", max_state_bytes=10**9)
            saved = fin.payload
            sizes.append(len(saved))
        history += [HistoryMessage(user_id, "user", f"第{i}句"), HistoryMessage(agent_msg, "agent", f"莉娅回应第{i}句。", "lia")]
    return {"turns": turns, "final_bytes": sizes[-1], "max_bytes": max(sizes), "cap": 60_000}


async def group_latency(turns: int, latency_ms: int) -> dict[str, float]:
    from litestar.testing import AsyncTestClient

    from app.llm.fakes import FunctionModel
    from app.main import create_app
    from tests.integration.conftest import ADMIN, ALICE, make_settings
    from tests.integration.turns.fakes import World, select

    out = {}
    for label, story in (("story_off", {"enabled": False}), ("story_on", {"enabled": True, "modelConfigId": "default"})):
        w = World(**ANSWERS)
        w.delay = latency_ms / 1000
        with tempfile.TemporaryDirectory() as tmp:
            settings = make_settings(f"sqlite+aiosqlite:///{tmp}/bench.db", Path(tmp))
            async with AsyncTestClient(create_app(settings, model=FunctionModel(w._answer)), timeout=120) as c:
                ids = [(await c.post("/v1/agents", json={"name": n}, headers=ADMIN)).json()["id"] for n in ("莉娅", "周衡", "小跳")]
                w.handlers["select"] = select(ids[0])
                conv = (await c.post("/v1/conversations", json={"kind": "group", "agentIds": ids, "settings": {
                    "replyLimit": 1, "story": story}}, headers=ALICE)).json()  # fmt: skip
                times = []
                for i in range(turns):
                    t0 = time.perf_counter()
                    r = await c.post(f"/v1/conversations/{conv['id']}/turns", json={"content": f"第{i}句：你好"}, headers=ALICE)
                    assert r.status_code == 201, r.text
                    times.append((time.perf_counter() - t0) * 1000)
        out[label] = round(statistics.median(times), 1)
    out["added_ms_p50"] = round(out["story_on"] - out["story_off"], 1)
    out["latency_ms_per_call (simulated)"] = latency_ms
    return out


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--latency-ms", type=int, default=100)
    ap.add_argument("--group-turns", type=int, default=10)
    a = ap.parse_args()
    report = {"mechanical_per_turn": await mechanical(a.turns), "state_size": await state_size(a.turns),
              "group_turn": await group_latency(a.group_turns, a.latency_ms)}  # fmt: skip
    print(json.dumps(report, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
