"""The turn as typed steps: each reply saved and announced as soon as it passes its checks,
token deltas on the SSE stream, speculation that never changes what is saved, suggestions that
never hold the turn lock. Every test runs on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
from litestar.testing import AsyncTestClient
from sqlalchemy import func
from sqlalchemy import select as sa_select

from app.db.models import SpeakerDecision
from app.main import create_app
from app.turns.plugins import ActorPrep, TurnPlugin
from tests.integration.conftest import ALICE, Api
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import World, select


def _events(text: str) -> list[tuple[str, dict[str, Any]]]:
    out, name = [], None
    for line in text.splitlines():
        if line.startswith("event:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("data:") and name:
            out.append((name, json.loads(line.split(":", 1)[1])))
            name = None
    return out


async def _sse(api: Api, conv_id: str, content: str) -> list[tuple[str, dict[str, Any]]]:
    resp = await api.client.post(f"/v1/conversations/{conv_id}/turns", json={"content": content},
                                 headers={**ALICE, "accept": "text/event-stream"})  # fmt: skip
    assert resp.status_code == 201, resp.status_code
    return _events(resp.text)


async def test_deltas_rebuild_the_saved_text_and_carry_draft_ids(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    events = await _sse(turn_api, conv["id"], "我今天好难过")
    deltas = [d for n, d in events if n == "message.delta"]
    created = next(d for n, d in events if n == "message.created")
    assert deltas and {d["draftId"] for d in deltas} == {created["draftId"]}
    assert all(d["agentId"] == gentle["id"] and d["turnId"] == created["turnId"] for d in deltas)
    text = ""
    for d in deltas:  # offsets place each piece exactly
        assert d["offset"] == len(text)
        text += d["delta"]
    assert text == created["message"]["content"]


async def test_a_draft_that_fails_its_checks_is_discarded_then_regenerated(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["actor"] = ["哈" * 200, "我在这里陪着你，慢慢说。"]
    events = await _sse(turn_api, conv["id"], "莉娅，我今天好难过")  # named: not speculative, shown at once
    names = [n for n, _ in events]
    discarded = next(d for n, d in events if n == "message.discarded")
    created = next(d for n, d in events if n == "message.created")
    assert names.index("message.discarded") < names.index("message.created")
    assert discarded["problems"] and discarded["draftId"] != created["draftId"]
    assert created["message"]["content"] == "我在这里陪着你，慢慢说。"


async def test_a_timeout_late_in_the_turn_keeps_the_replies_already_saved(settings, engine) -> None:
    world = World()

    async def slow_plan(_: Any) -> dict[str, Any]:
        await asyncio.sleep(5)
        return {"reply": None, "reason": "太慢"}

    world.handlers["cross_reply.plan"] = slow_plan
    app = create_app(msgspec.structs.replace(settings, turn_timeout_s=2.0), model=world.model)  # the plan takes 5 s
    async with AsyncTestClient(app, timeout=30) as client:
        api = Api(client, settings)
        conv, (gentle, _, _) = await make_group(api)
        world.handlers["select"] = select(gentle["id"])
        body = (await post_turn(api, conv["id"], "我今天好难过")).json()
    assert body["status"] == "failed" and body["error"]["code"] == "turn_timeout"
    assert [m["agentId"] for m in body["agentMessages"]] == [gentle["id"]]  # generated, checked, saved: kept
    async with engine.connect() as conn:
        decisions = await conn.scalar(sa_select(func.count()).select_from(SpeakerDecision)
                                      .where(SpeakerDecision.turn_id == body["turnId"]))  # fmt: skip
    assert decisions == 3  # written right after the selection, not at the end


async def test_a_mentioned_agent_starts_before_emotion_is_known(turn_api: Api, world: World) -> None:
    conv, (_, planner, _) = await make_group(turn_api)
    emotion = world.handlers["emotion"]

    async def slow_emotion(_: Any) -> dict[str, Any]:
        await asyncio.sleep(0.5)
        return emotion

    world.handlers["emotion"] = slow_emotion
    events = await _sse(turn_api, conv["id"], "周衡，你怎么看这份计划？")
    names = [n for n, _ in events]
    assert names.index("message.delta") < names.index("turn.emotion")  # no selector, no waiting
    created = [d["message"] for n, d in events if n == "message.created"]
    assert created[0]["agentId"] == planner["id"] and created[0]["metadata"]["selectedBy"] == "mention"
    assert created[0]["metadata"]["speculation"] == "none"


async def test_a_mentioned_agents_request_goes_out_before_the_understanding_calls(turn_api: Api,
                                                                                  world: World) -> None:  # fmt: skip
    """Sent together, the reply's first token comes back with the intent and emotion answers."""

    class SlowPrepare(TurnPlugin):  # e.g. the Story reading its state before the reply
        async def before_actor(self, info: Any, agent_id: str) -> ActorPrep:
            await asyncio.sleep(0.02)
            return ActorPrep()

    turn_api.client.app.state.turn_pipeline.plugins.append(SlowPrepare())
    conv, _ = await make_group(turn_api)
    await post_turn(turn_api, conv["id"], "周衡，你怎么看这份计划？")
    assert world.calls.index("actor") < min(world.calls.index("intent"), world.calls.index("emotion"))


async def _speakers(settings, speculation: bool, selected: list[str] | None) -> list[tuple[str, str]]:
    world = World()
    app = create_app(msgspec.structs.replace(settings, turn_speculation=speculation), model=world.model)
    async with AsyncTestClient(app, timeout=30) as client:
        api = Api(client, settings)
        conv, agents = await make_group(api, replyLimit=2, selection={"mode": "llm"})
        ids = [agents[i]["id"] for i in (selected or [])]
        world.handlers["select"] = select(*ids) if ids else {"selectedAgentIds": ["nobody"], "reason": "坏的"}
        out = []
        for text in ("我今天好难过", "大家有什么建议吗？"):
            body = (await post_turn(api, conv["id"], text)).json()
            out += [(m["agentId"], m["content"]) for m in body["agentMessages"]]
        return out


async def test_speculation_never_changes_what_is_saved(settings) -> None:
    for selected in ([2], [1, 0], None):  # the selector disagrees, partly agrees, is rejected (fallback)
        on = await _speakers(settings, True, selected)
        off = await _speakers(settings, False, selected)
        assert sorted(c for _, c in on) == sorted(c for _, c in off) and on  # each content names its agent


async def test_speculation_is_recorded_per_message(settings) -> None:
    world = World()
    app = create_app(msgspec.structs.replace(settings, turn_speculation_extra=0), model=world.model)
    async with AsyncTestClient(app, timeout=30) as client:
        await _recorded_per_message(Api(client, settings), world)


async def test_a_wider_bet_speculates_on_the_next_candidate_too(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    body = (await post_turn(turn_api, conv["id"], "我今天好难过")).json()
    spec = body["orchestration"]["speculation"]
    assert len(spec["started"]) == 2  # the scorer's one pick for sadness, and the next-ranked candidate
    assert spec["hits"] == [gentle["id"]] and len(spec["misses"]) == 1


async def _recorded_per_message(turn_api: Api, world: World) -> None:
    conv, (gentle, planner, joker) = await make_group(turn_api, selection={"mode": "llm"})
    world.handlers["select"] = select(joker["id"])  # the scorer would pick the comforter for sadness
    body = (await post_turn(turn_api, conv["id"], "我今天好难过")).json()
    spec = body["orchestration"]["speculation"]
    assert spec["started"] and spec["misses"] == spec["started"] and spec["hits"] == []
    assert [m["agentId"] for m in body["agentMessages"]] == [joker["id"]]
    assert body["agentMessages"][0]["metadata"]["speculation"] == "miss"
    world.handlers["select"] = lambda req: {"selectedAgentIds": body["orchestration"]["speculation"]["started"][:1],
                                            "reason": "同意"}  # fmt: skip
    again = (await post_turn(turn_api, conv["id"], "我还是好难过")).json()
    assert again["agentMessages"][0]["metadata"]["speculation"] == "hit"


async def test_suggestions_never_hold_the_turn_lock(settings) -> None:
    """While the chips are still being generated, the conversation already accepts a new turn."""
    world = World()
    options = world.handlers["auto_reply"]
    app = create_app(settings, model=world.model)
    seen: dict[str, Any] = {}

    async def suggestions_meanwhile(_: Any) -> dict[str, Any]:
        from app.turns import repository

        try:  # the turn is over: its lock must be free although its suggestions are not done
            started = await repository.start_turn(app.state.sessions, "alice", seen["conv"], "其实也还好", None,
                                                  stale_after_s=60)  # fmt: skip
            seen["next"] = started.turn.status
        except Exception as exc:  # noqa: BLE001
            seen["next"] = type(exc).__name__
        return options

    world.handlers["auto_reply"] = suggestions_meanwhile
    async with AsyncTestClient(app, timeout=30) as client:
        api = Api(client, settings)
        conv, (gentle, _, _) = await make_group(api)
        seen["conv"] = conv["id"]
        world.handlers["select"] = select(gentle["id"])
        body = (await post_turn(api, conv["id"], "我今天好难过")).json()
    assert seen["next"] == "running"  # not TurnInProgress
    # The newer user message makes these chips stale: they are never shown as current.
    assert body["status"] == "completed" and body["suggestions"]["status"] == "cleared"


async def test_the_llm_quality_check_regenerates_once_then_drops(settings, engine) -> None:
    from app.db.models import QualityEvent, TurnStageMetric

    world = World()
    bad = {"passed": False, "problems": ["out_of_character"], "reason": "不像莉娅会说的话"}
    world.handlers["quality"] = [bad, {"passed": True, "problems": [], "reason": "ok"}]
    world.handlers["actor"] = ["我才不管你呢。", "我在这里陪着你，慢慢说。", "我还在，一直都在。"]
    app = create_app(msgspec.structs.replace(settings, quality_check=True), model=world.model)
    async with AsyncTestClient(app, timeout=30) as client:
        api = Api(client, settings)
        conv, (gentle, _, _) = await make_group(api)
        resp = await client.post(f"/v1/conversations/{conv['id']}/turns", json={"content": "莉娅，我今天好难过"},
                                 headers={**ALICE, "accept": "text/event-stream"})  # fmt: skip
        events = _events(resp.text)
        world.handlers["quality"] = [bad]  # fails twice: the reply is dropped with the judge's reason
        dropped = (await post_turn(api, conv["id"], "莉娅，你还在吗？")).json()
    discarded = next(d for n, d in events if n == "message.discarded")
    assert discarded["problems"][0].startswith("out_of_character")
    result = next(d for n, d in events if n == "turn.completed")
    [message] = result["agentMessages"]
    assert message["content"] == "我在这里陪着你，慢慢说。" and message["agentId"] == gentle["id"]
    judge = message["metadata"]["orchestration"]["quality"][gentle["id"]]["judge"]
    assert [j["verdict"]["passed"] for j in judge] == [False, True]
    assert dropped["status"] == "failed" and dropped["error"]["code"] == "all_replies_dropped"
    async with engine.connect() as conn:
        reasons = (await conn.execute(sa_select(QualityEvent.reason, QualityEvent.action)
                                      .where(QualityEvent.conversation_id == conv["id"]))).all()  # fmt: skip
        stages = (await conn.execute(sa_select(TurnStageMetric.stage)
                                     .where(TurnStageMetric.turn_id == result["turnId"]))).scalars().all()  # fmt: skip
    assert ("out_of_character", "regenerated") in reasons and ("out_of_character", "dropped") in reasons
    assert stages.count("quality") == 2


async def test_speculation_hits_are_counted_in_the_analytics(turn_api: Api, world: World) -> None:
    from tests.integration.conftest import ADMIN

    conv, (gentle, _, _) = await make_group(turn_api, selection={"mode": "llm"})
    world.handlers["select"] = select(gentle["id"])  # the scorer's pick for sadness: a hit
    await post_turn(turn_api, conv["id"], "我今天好难过")
    # The scorer now prefers someone who did not just speak; the selector keeps her: a miss.
    second = (await post_turn(turn_api, conv["id"], "我还是好难过")).json()
    assert second["orchestration"]["speculation"]["misses"], second["orchestration"]["speculation"]
    await post_turn(turn_api, conv["id"], "小跳，讲个笑话吧")  # a mention: no speculation
    rows = (await turn_api.client.get("/v1/analytics/speculation", headers=ADMIN)).json()
    [row] = rows if isinstance(rows, list) else rows["rows"]
    assert (row["hits"], row["misses"], row["none"], row["hitRate"]) == (1, 1, 1, 0.5)
