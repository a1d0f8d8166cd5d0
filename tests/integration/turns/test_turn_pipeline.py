from __future__ import annotations

import asyncio

from sqlalchemy import select as sa_select

from app.db.engine import session_factory
from app.db.models import QualityEvent, SpeakerDecision, Turn, TurnStageMetric
from app.errors import ModelTimeout, ModelRefused
from tests.integration.conftest import ALICE, Api
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import World, persona, select, speaker

SEED_KEYS = {"source", "selectedBy", "pipelineVersion", "model", "wireApi", "replyKind", "respondToAgentId",
             "crossReplyReason", "crossReplyRound", "orchestration", "timings", "usage"}  # fmt: skip


async def _decisions(engine, turn_id: str) -> list[SpeakerDecision]:
    async with session_factory(engine)() as s:
        return list(await s.scalars(sa_select(SpeakerDecision).where(SpeakerDecision.turn_id == turn_id)))


async def test_llm_selection_is_used_when_valid(turn_api: Api, world: World, engine) -> None:
    conv, (gentle, planner, joker) = await make_group(turn_api, selection={"mode": "llm"})
    world.handlers["select"] = select(gentle["id"])
    resp = await post_turn(turn_api, conv["id"], "我今天好难过")
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert body["status"] == "completed"
    assert [m["agentId"] for m in body["agentMessages"]] == [gentle["id"]]
    meta = body["agentMessages"][0]["metadata"]
    assert SEED_KEYS <= set(meta)
    assert meta["selectedBy"] == "llm" and meta["source"] == "group_chat_agent" and meta["replyKind"] == "primary"
    # Saved the moment it passed its checks: the cross-reply plan comes later (cross replies carry it).
    assert set(meta["orchestration"]) == {"intent", "selection", "speakingContext", "quality"}
    assert meta["speculation"] in ("hit", "miss")  # the selector ran, so the fallback's pick was speculated
    rows = await _decisions(engine, body["turnId"])
    assert len(rows) == 3
    chosen = [r for r in rows if r.selected]
    assert [r.agent_id for r in chosen] == [gentle["id"]] and chosen[0].selected_by == "llm"
    assert all(r.decided_by == "llm" and r.weights_version == "seed-v0" for r in rows)
    assert {r.agent_id: r.llm_selected for r in rows} == {gentle["id"]: True, planner["id"]: False, joker["id"]: False}
    assert all(r.primary_emotion == "sad" and r.emotion_source == "llm" for r in rows)


async def test_invalid_llm_ids_fall_back_to_scorer(turn_api: Api, world: World, engine) -> None:
    conv, (gentle, _, _) = await make_group(turn_api, selection={"mode": "llm"})
    world.handlers["select"] = select("not-a-member")
    body = (await post_turn(turn_api, conv["id"], "我今天好难过")).json()
    assert body["orchestration"]["selection"]["llm"]["source"] == "fallback"
    assert body["agentMessages"][0]["agentId"] == gentle["id"]  # the comforting agent wins on a sad message
    assert body["agentMessages"][0]["metadata"]["selectedBy"] == "fallback"
    rows = await _decisions(engine, body["turnId"])
    assert all(r.decided_by == "fallback" and r.llm_selected is None for r in rows)
    assert world.calls.count("select") == 2  # one repair, then fallback


async def test_timeout_and_refusal_fall_back_and_are_recorded(turn_api: Api, world: World) -> None:
    conv, _ = await make_group(turn_api, selection={"mode": "llm"})
    world.handlers["select"] = ModelTimeout("slow")
    world.handlers["emotion"] = ModelRefused("no")
    body = (await post_turn(turn_api, conv["id"], "我今天好难过")).json()
    orch = body["orchestration"]
    assert orch["selection"]["llm"]["error"]["code"] == "model_timeout"
    assert orch["emotion"]["source"] == "fallback" and orch["emotion"]["run"]["error"]["code"] == "model_refused"
    assert orch["emotion"]["primaryEmotion"] == "sad"  # the offline heuristic still reads the message
    assert body["status"] == "completed"


async def test_mention_beats_llm(turn_api: Api, world: World, engine) -> None:
    conv, (gentle, planner, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    body = (await post_turn(turn_api, conv["id"], "周衡你怎么看这个计划？")).json()
    assert body["agentMessages"][0]["agentId"] == planner["id"]
    assert body["agentMessages"][0]["metadata"]["selectedBy"] == "mention"
    rows = {r.agent_id: r for r in await _decisions(engine, body["turnId"])}
    assert rows[planner["id"]].mentioned == 1.0 and rows[planner["id"]].selected_by == "mention"


async def test_intent_and_emotion_run_concurrently(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    gate = asyncio.Event()
    seen: list[str] = []

    async def waits_for_the_other(req):
        seen.append(req.purpose)
        if len(seen) == 2:
            gate.set()
        await asyncio.wait_for(gate.wait(), 5)  # deadlocks (times out) if the calls were sequential
        return {"intent": {"kind": "chit_chat", "addressedAgentIds": [], "wantsMultipleVoices": False},
                "emotion": {"primaryEmotion": "sad", "intensity": 0.5, "needsComfort": True, "needsAdvice": False,
                            "needsDeescalation": False, "socialEnergy": "low", "reason": "r"}}[req.purpose]  # fmt: skip

    world.handlers["intent"] = waits_for_the_other
    world.handlers["emotion"] = waits_for_the_other
    body = (await post_turn(turn_api, conv["id"], "我今天好难过")).json()
    assert body["orchestration"]["intent"]["source"] == "llm" and body["orchestration"]["emotion"]["source"] == "llm"


async def test_cross_reply_is_recorded_with_respond_to(turn_api: Api, world: World) -> None:
    conv, (gentle, planner, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    world.handlers["cross_reply.plan"] = lambda req: {"reply": {"fromAgentId": planner["id"], "toAgentId": gentle["id"]},
                                                      "reason": "补充一个实际建议"}  # fmt: skip
    body = (await post_turn(turn_api, conv["id"], "我今天好难过")).json()
    assert [m["agentId"] for m in body["agentMessages"]] == [gentle["id"], planner["id"]]
    cross = body["agentMessages"][1]
    assert cross["replyKind"] == "cross" and cross["respondToAgentId"] == gentle["id"]
    assert cross["metadata"]["crossReplyRound"] == 1 and cross["metadata"]["crossReplyReason"] == "补充一个实际建议"


async def test_quality_failure_is_regenerated_then_dropped(turn_api: Api, world: World, engine) -> None:
    conv, (gentle, planner, _) = await make_group(turn_api, replyLimit=2, selection={"mode": "llm"})
    world.handlers["select"] = select(gentle["id"], planner["id"])
    world.handlers["actor"] = lambda req: "I only speak English here." if speaker(req) == "周衡" else "我在这里陪着你。"
    body = (await post_turn(turn_api, conv["id"], "大家怎么看？我好难过")).json()
    assert [m["agentId"] for m in body["agentMessages"]] == [gentle["id"]]
    quality = body["orchestration"]["quality"][planner["id"]]
    assert not quality["passed"] and quality["attempts"] == 2 and quality["problems"][0].startswith("wrong_script")
    async with session_factory(engine)() as s:
        events = list(await s.scalars(sa_select(QualityEvent).where(QualityEvent.turn_id == body["turnId"])))
    assert sorted(e.action for e in events) == ["dropped", "regenerated"]
    assert {e.reason for e in events} == {"wrong_script"}


async def test_same_idempotency_key_returns_same_turn_without_second_message(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    first = await post_turn(turn_api, conv["id"], "我今天好难过", idempotencyKey="k1")
    again = await post_turn(turn_api, conv["id"], "我今天好难过", idempotencyKey="k1")
    assert first.status_code == 201 and again.status_code == 200
    assert first.json()["turnId"] == again.json()["turnId"]
    page = (await turn_api.client.get(f"/v1/conversations/{conv['id']}/messages", headers=ALICE)).json()
    assert [m["role"] for m in page["items"]].count("user") == 1


async def test_second_turn_while_one_runs_is_409(turn_api: Api, world: World, engine) -> None:
    from app.turns.repository import finish_turn, start_turn

    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    sessions = session_factory(engine)  # another "server process" holding a running turn
    running = await start_turn(sessions, "alice", conv["id"], "我今天好难过", None, stale_after_s=600)
    second = await post_turn(turn_api, conv["id"], "还有一件事")
    assert second.status_code == 409 and second.json()["code"] == "turn_in_progress"
    assert 1 <= int(second.headers["retry-after"]) <= 10  # the running turn's remaining lease
    assert second.json()["details"]["runningTurnId"] == running.turn.id
    page = (await turn_api.client.get(f"/v1/conversations/{conv['id']}/messages", headers=ALICE)).json()
    assert [m["content"] for m in page["items"]] == ["我今天好难过"]
    await finish_turn(sessions, running.turn.id, status="completed", result=None, error=None, intent=None,
                      emotion=None, timings={}, usage={})  # fmt: skip
    assert (await post_turn(turn_api, conv["id"], "还有一件事")).status_code == 201


async def test_sse_events_arrive_in_order(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    resp = await turn_api.client.post(f"/v1/conversations/{conv['id']}/turns", json={"content": "我今天好难过"},
                                      headers={**ALICE, "accept": "text/event-stream"})  # fmt: skip
    events = [line.split(":", 1)[1].strip() for line in resp.text.splitlines() if line.startswith("event:")]
    durable = [e for e in events if e != "message.delta"]
    # Suggestions never delay turn.completed: they follow it on the same stream.
    assert durable == ["turn.started", "turn.emotion", "turn.selection", "message.created",
                       "turn.completed", "suggestions.ready", "turn.closed"]
    # The reply's words come after the turn is announced and before the saved message; they may
    # pass the understanding events while those are still being written (app.events.outbox).
    deltas = [i for i, e in enumerate(events) if e == "message.delta"]
    assert deltas and 0 < min(deltas) and max(deltas) < events.index("message.created")


async def test_turn_can_be_read_back_and_metrics_are_written(turn_api: Api, world: World, engine) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    body = (await post_turn(turn_api, conv["id"], "我今天好难过")).json()
    read = (await turn_api.client.get(f"/v1/conversations/{conv['id']}/turns/{body['turnId']}", headers=ALICE)).json()
    assert read["turnId"] == body["turnId"] and read["status"] == "completed"
    async with session_factory(engine)() as s:
        turn = await s.get(Turn, body["turnId"])
        stages = set(await s.scalars(sa_select(TurnStageMetric.stage).where(TurnStageMetric.turn_id == body["turnId"])))
    assert turn.running_lock is None and turn.status == "completed"
    assert {"intent", "emotion", "select", "actor"} <= stages


async def test_direct_conversation_skips_selection_and_counts_messages(turn_api: Api, world: World, engine) -> None:
    agent = await turn_api.agent("莉娅")
    conv = (await turn_api.client.post("/v1/conversations", json={"kind": "direct", "agentIds": [agent["id"]]},
                                       headers=ALICE)).json()  # fmt: skip
    body = (await post_turn(turn_api, conv["id"], "你好呀")).json()
    assert body["agentMessages"][0]["metadata"]["selectedBy"] == "direct"
    assert "select" not in world.calls and "intent" not in world.calls
    rows = await _decisions(engine, body["turnId"])
    assert [(r.selected, r.selected_by, r.decided_by) for r in rows] == [(True, "direct", "direct")]
    conv_after = (await turn_api.client.get(f"/v1/conversations/{conv['id']}", headers=ALICE)).json()
    assert conv_after["messageCount"] == 2


async def test_turn_needs_a_model_for_replies(settings, engine) -> None:
    from litestar.testing import AsyncTestClient

    from app.main import create_app

    app = create_app(settings)  # the real gateway with no LLM configured
    async with AsyncTestClient(app) as client:
        api = Api(client, settings)
        conv, _ = await make_group(api)
        resp = await post_turn(api, conv["id"], "你好")
        assert resp.status_code == 503 and resp.json()["code"] == "model_not_configured"
        page = (await client.get(f"/v1/conversations/{conv['id']}/messages", headers=ALICE)).json()
        assert page["items"] == []


async def test_when_every_reply_fails_the_turn_fails_but_decisions_are_kept(turn_api: Api, world: World, engine) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    world.handlers["actor"] = ModelTimeout("actor down")
    body = (await post_turn(turn_api, conv["id"], "我今天好难过")).json()
    assert body["status"] == "failed" and body["agentMessages"] == []
    assert body["userMessage"]["content"] == "我今天好难过"  # the accepted user message is never lost
    assert len(await _decisions(engine, body["turnId"])) == 3
    retry = await post_turn(turn_api, conv["id"], "还在吗")
    assert retry.status_code == 201  # the running lock was released


async def test_a_running_turn_reads_back_as_running(turn_api: Api, world: World, engine) -> None:
    from app.turns.repository import start_turn

    conv, _ = await make_group(turn_api)
    running = await start_turn(session_factory(engine), "alice", conv["id"], "你好", None, stale_after_s=600)
    read = await turn_api.client.get(f"/v1/conversations/{conv['id']}/turns/{running.turn.id}", headers=ALICE)
    assert read.status_code == 200
    assert read.json()["status"] == "running" and read.json()["userMessage"]["content"] == "你好"
    assert read.json()["agentMessages"] == []
    other = await turn_api.client.get(f"/v1/conversations/{conv['id']}/turns/nope", headers=ALICE)
    assert other.status_code == 404 and other.json()["code"] == "turn_not_found"
