"""What generation may and may not write: no chat/turn/Story changes, the database decides
staleness across processes, and crash leftovers are failed on start-up."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from litestar.testing import AsyncTestClient
from sqlalchemy import select

from app.db.engine import session_factory
from app.db.models import Conversation, Message, StoryState, Suggestion, Turn, TurnStageMetric, new_id, utcnow
from app.main import create_app
from tests.integration.conftest import ALICE, Api
from tests.integration.suggestions.conftest import EN_OPTIONS, AutoReplyScript, in_thread, suggest_url, suggestion_rows, until
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import select as choose


async def _snapshot(engine, conv_id: str) -> dict[str, Any]:
    async with session_factory(engine)() as s:
        conv = await s.get(Conversation, conv_id)
        messages = await s.scalars(select(Message).where(Message.conversation_id == conv_id).order_by(Message.seq))
        turns = await s.scalars(select(Turn).where(Turn.conversation_id == conv_id).order_by(Turn.id))
        states = await s.scalars(select(StoryState).where(StoryState.conversation_id == conv_id))
        metrics = await s.scalars(select(TurnStageMetric.id).where(TurnStageMetric.conversation_id == conv_id))
        return {
            "conversation": (conv.message_count, conv.last_seq, conv.last_message_at_ms, conv.version, conv.updated_at),
            "messages": [(m.id, m.seq, m.role, m.content, m.edited_at, m.deleted_at, m.metadata_json) for m in messages],
            "turns": [(t.id, t.status, t.result, t.intent, t.emotion, t.completed_at) for t in turns],
            "story": [(x.id, x.revision, x.status, x.envelope, x.last_outcome, x.updated_at) for x in states],
            "turn_metrics": sorted(metrics),
        }  # fmt: skip


async def test_generating_suggestions_writes_no_message_turn_counter_or_story_state(sapi: Api, world, script: AutoReplyScript, engine) -> None:
    conv, (gentle, _, _) = await make_group(sapi)
    world.handlers["select"] = choose(gentle["id"])
    turn = (await post_turn(sapi, conv["id"], "我今天好难过")).json()
    async with session_factory(engine)() as s:
        s.add(StoryState(owner_id="alice", conversation_id=conv["id"], agent_id=gentle["id"], revision=3,
                         envelope=b"{}", last_outcome={"ok": True}))  # fmt: skip
        await s.commit()
    before = await _snapshot(engine, conv["id"])
    anchor = turn["agentMessages"][0]["id"]
    assert (await sapi.client.post(suggest_url(conv["id"], anchor), headers=ALICE)).status_code == 201
    script.answers = [{"options": EN_OPTIONS}]
    assert (await sapi.client.post(suggest_url(conv["id"], anchor), headers=ALICE)).status_code == 502
    assert (await sapi.client.get(f"/v1/conversations/{conv['id']}/suggestions/latest", headers=ALICE)).status_code == 200
    assert await _snapshot(engine, conv["id"]) == before
    assert [r.status for r in await suggestion_rows(engine, conv["id"])] == ["ready", "ready", "failed"]


async def test_a_turn_in_another_process_makes_a_running_generation_stale(settings, world, script: AutoReplyScript, engine) -> None:
    """Process B cannot cancel A's task in-process; the cleared row in the database stops A's
    model call (A watches its row) and its result."""
    async with AsyncTestClient(create_app(settings, model=world.model), timeout=30) as a_client, \
               AsyncTestClient(create_app(settings, model=world.model), timeout=30) as b_client:  # fmt: skip
        a, b = Api(a_client, settings), Api(b_client, settings)
        conv, (gentle, _, _) = await make_group(a)
        world.handlers["select"] = choose(gentle["id"])
        anchor = (await post_turn(a, conv["id"], "我今天好难过")).json()["agentMessages"][0]["id"]
        script.block = 1
        pending = in_thread(a.client.post(suggest_url(conv["id"], anchor), headers=ALICE))
        await until(lambda: script.started == 1)
        assert (await post_turn(b, conv["id"], "我换个话题")).status_code == 201
        # A's generation watches the database: B's user message makes it stale and A cancels it
        await until(lambda: script.cancelled == 1)
        script.released = True
        resp = await pending
        assert resp.status_code == 409 and resp.json()["code"] == "suggestions_stale"
        stale_id = resp.json()["details"]["suggestionId"]
        statuses = {r.id: r.status for r in await suggestion_rows(engine, conv["id"])}
        assert statuses[stale_id] == "cleared" and list(statuses.values()).count("ready") == 1


async def test_start_up_fails_rows_a_crash_left_generating(sapi: Api, world, engine, settings) -> None:
    conv, (gentle, _, _) = await make_group(sapi)
    world.handlers["select"] = choose(gentle["id"])
    anchor = (await post_turn(sapi, conv["id"], "我今天好难过")).json()["agentMessages"][0]["id"]
    long_ago, now = utcnow() - timedelta(minutes=10), utcnow()
    crashed, live = new_id(), new_id()
    async with session_factory(engine)() as s:
        for row_id, at in ((crashed, long_ago), (live, now)):
            s.add(Suggestion(id=row_id, conversation_id=conv["id"], anchor_message_id=anchor, status="generating",
                             created_at=at, updated_at=at))  # fmt: skip
        await s.commit()
    async with AsyncTestClient(create_app(settings, model=world.model), timeout=30):  # a restarted process
        async with session_factory(engine)() as s:
            rows = {r.id: r for r in await s.scalars(select(Suggestion).where(Suggestion.id.in_([crashed, live])))}
    assert rows[crashed].status == "failed" and "interrupted" in rows[crashed].problems[0][0]
    assert rows[live].status == "generating"  # may belong to another live process on this database
