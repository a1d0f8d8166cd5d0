"""Suggestions after a turn: SSE and JSON results, staleness, cancellation, disabling."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select as sa_select

from app.db.engine import session_factory
from app.db.models import TurnStageMetric

from app.suggestions.hooks import SuggestionHooks
from tests.integration.conftest import ALICE, Api
from tests.integration.suggestions.conftest import ZH_OPTIONS, AutoReplyScript, in_thread, suggest_url, suggestion_rows, until
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import select


def _events(text: str) -> list[tuple[str, dict]]:
    out, name = [], None
    for line in text.splitlines():
        if line.startswith("event:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("data:") and name:
            out.append((name, json.loads(line.split(":", 1)[1])))
    return out


async def test_sse_stream_sends_suggestions_ready_for_the_last_agent_message(sapi: Api, world) -> None:
    conv, (gentle, _, _) = await make_group(sapi)
    world.handlers["select"] = select(gentle["id"])
    resp = await sapi.client.post(f"/v1/conversations/{conv['id']}/turns", json={"content": "我今天好难过"},
                                  headers={**ALICE, "accept": "text/event-stream"})  # fmt: skip
    events = _events(resp.text)
    names = [n for n, _ in events]
    assert names[-3:] == ["turn.completed", "suggestions.ready", "turn.closed"]  # suggestions never delay turn.completed
    ready = dict(events)["suggestions.ready"]
    agent_message = dict(events)["message.created"]["message"]
    assert ready["options"] == ZH_OPTIONS and ready["anchorMessageId"] == agent_message["id"] and ready["status"] == "ready"


async def test_json_turn_includes_suggestions_that_finished_in_time(sapi: Api, world, script: AutoReplyScript, engine) -> None:
    conv, (gentle, _, _) = await make_group(sapi)
    world.handlers["select"] = select(gentle["id"])
    body = (await post_turn(sapi, conv["id"], "我今天好难过")).json()
    suggestions = body["suggestions"]
    assert suggestions["status"] == "ready" and suggestions["options"] == ZH_OPTIONS
    assert suggestions["anchorMessageId"] == body["agentMessages"][-1]["id"] and suggestions["turnId"] == body["turnId"]
    prompt = script.prompt()
    assert '"primaryEmotion":"sad"' in prompt and "chit_chat" in prompt  # the turn's reading, as hints
    assert '"run"' not in prompt
    async with session_factory(engine)() as s:
        metric = await s.scalar(sa_select(TurnStageMetric).where(TurnStageMetric.turn_id == body["turnId"],
                                                                 TurnStageMetric.stage == "auto_reply"))  # fmt: skip
    assert metric.outcome == "ok" and metric.ms > 0 and metric.input_tokens > 0


async def test_slow_suggestions_return_an_id_and_finish_in_the_background(sapi: Api, world, script: AutoReplyScript,
                                                                          engine, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(SuggestionHooks, "max_turn_wait_s", 0.2)
    conv, (gentle, _, _) = await make_group(sapi)
    world.handlers["select"] = select(gentle["id"])
    script.block = 1
    body = (await post_turn(sapi, conv["id"], "我今天好难过")).json()
    assert body["status"] == "completed" and body["suggestions"]["status"] == "generating"
    script.released = True
    latest_url = f"/v1/conversations/{conv['id']}/suggestions/latest"

    async def ready() -> bool:
        return (await sapi.client.get(latest_url, headers=ALICE)).json()["status"] == "ready"

    for _ in range(200):
        if await ready():
            break
    latest = (await sapi.client.get(latest_url, headers=ALICE)).json()
    assert latest["suggestionId"] == body["suggestions"]["suggestionId"] and latest["options"] == ZH_OPTIONS


async def test_new_turn_cancels_in_flight_generation_which_never_becomes_ready(sapi: Api, world, script: AutoReplyScript,
                                                                               engine, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(SuggestionHooks, "max_turn_wait_s", 0.2)
    conv, (gentle, _, _) = await make_group(sapi)
    world.handlers["select"] = select(gentle["id"])
    script.block = 1
    first = (await post_turn(sapi, conv["id"], "我今天好难过")).json()["suggestions"]
    assert first["status"] == "generating"
    second = (await post_turn(sapi, conv["id"], "其实也还好")).json()["suggestions"]
    assert script.cancelled == 1  # the model call saw the cancellation
    assert second["status"] == "ready"
    rows = {r.id: r for r in await suggestion_rows(engine, conv["id"])}
    assert rows[first["suggestionId"]].status == "cleared" and rows[first["suggestionId"]].options == []
    latest = (await sapi.client.get(f"/v1/conversations/{conv['id']}/suggestions/latest", headers=ALICE)).json()
    assert latest["suggestionId"] == second["suggestionId"]


async def test_a_turn_posted_during_a_requested_generation_cancels_it(sapi: Api, world, script: AutoReplyScript, engine) -> None:
    conv, (gentle, _, _) = await make_group(sapi)
    world.handlers["select"] = select(gentle["id"])
    turn = (await post_turn(sapi, conv["id"], "我今天好难过")).json()
    script.block = 1
    pending = in_thread(sapi.client.post(suggest_url(conv["id"], turn["agentMessages"][0]["id"]), headers=ALICE))
    await until(lambda: script.started == 1)
    await post_turn(sapi, conv["id"], "算了，不说这个")
    resp = await pending
    assert resp.status_code == 409 and resp.json()["code"] == "suggestions_stale"
    assert script.cancelled == 1
    cancelled = next(r for r in await suggestion_rows(engine, conv["id"]) if r.id == resp.json()["details"]["suggestionId"])
    assert cancelled.status == "cleared"


async def test_previous_suggestions_are_cleared_by_a_new_user_message(sapi: Api, world, engine) -> None:
    conv, (gentle, _, _) = await make_group(sapi)
    world.handlers["select"] = select(gentle["id"])
    first = (await post_turn(sapi, conv["id"], "我今天好难过")).json()["suggestions"]
    posted = await sapi.client.post(f"/v1/conversations/{conv['id']}/messages", json={"content": "还在吗"}, headers=ALICE)
    assert posted.status_code == 201
    latest = (await sapi.client.get(f"/v1/conversations/{conv['id']}/suggestions/latest", headers=ALICE)).json()
    assert latest["suggestionId"] == first["suggestionId"] and latest["status"] == "cleared" and latest["options"] == []
    await post_turn(sapi, conv["id"], "我又来了")
    statuses = [r.status for r in await suggestion_rows(engine, conv["id"])]
    assert statuses == ["cleared", "ready"]


async def test_disabled_auto_reply_makes_no_model_calls_in_turns(sapi: Api, world, script: AutoReplyScript, engine) -> None:
    conv, (gentle, _, _) = await make_group(sapi, autoReply={"enabled": False})
    world.handlers["select"] = select(gentle["id"])
    resp = await sapi.client.post(f"/v1/conversations/{conv['id']}/turns", json={"content": "我今天好难过"},
                                  headers={**ALICE, "accept": "text/event-stream"})  # fmt: skip
    assert not any(n.startswith("suggestions.") for n, _ in _events(resp.text))
    body = (await post_turn(sapi, conv["id"], "还是很难过")).json()
    assert "suggestions" not in body
    assert "auto_reply" not in world.calls and script.requests == []
    assert await suggestion_rows(engine, conv["id"]) == []


async def test_turn_without_suggestion_model_reports_failed_suggestions(sapi: Api, world, script: AutoReplyScript) -> None:
    conv, (gentle, _, _) = await make_group(sapi)
    world.handlers["select"] = select(gentle["id"])
    world.model.is_configured = lambda stage: stage != "auto_reply"
    body = (await post_turn(sapi, conv["id"], "我今天好难过")).json()
    assert body["status"] == "completed" and body["agentMessages"]
    assert body["suggestions"]["status"] == "failed" and body["suggestions"]["code"] == "model_not_configured"
    assert script.requests == []
