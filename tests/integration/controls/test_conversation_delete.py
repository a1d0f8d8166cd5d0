"""Deleting a conversation (issue 29): the owner's DELETE removes it and everything in it; it waits
for no one (409 while a turn or auto mode runs) and another user's conversation is a 404."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select

from app.db.engine import session_factory
from app.db.models import AutoRun, ConversationEvent, Message, SpeakerDecision, Turn, utcnow
from app.turns import repository
from tests.integration.conftest import ALICE, BOB
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import select as choose


async def _count(engine, model, conversation_id: str) -> int:
    async with session_factory(engine)() as session:
        return await session.scalar(select(func.count()).select_from(model).where(model.conversation_id == conversation_id))


async def test_deleting_a_conversation_removes_it_and_everything_in_it(turn_api, world, engine) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    other, _ = await make_group(turn_api)
    world.handlers["select"] = choose(gentle["id"])
    world.handlers["actor"] = lambda req: "我在。"
    assert (await post_turn(turn_api, conv["id"], "你好")).json()["status"] == "completed"
    assert await _count(engine, SpeakerDecision, conv["id"]) > 0
    url = f"/v1/conversations/{conv['id']}"
    assert (await turn_api.client.delete(url, headers=BOB)).status_code == 404  # not Bob's
    gone = await turn_api.client.delete(url, headers=ALICE)
    assert gone.status_code == 204, gone.text
    assert (await turn_api.client.get(url, headers=ALICE)).status_code == 404
    assert [c["id"] for c in (await turn_api.client.get("/v1/conversations", headers=ALICE)).json()] == [other["id"]]
    for model in (Message, Turn, SpeakerDecision, ConversationEvent):
        assert await _count(engine, model, conv["id"]) == 0, model.__name__
    again = await turn_api.client.delete(url, headers=ALICE)
    assert again.status_code == 404 and again.json()["code"] == "conversation_not_found"
    # the members are agents of the catalogue: they stay, and can be deleted once no conversation seats them
    assert (await turn_api.client.get(f"/v1/agents/{gentle['id']}", headers=ALICE)).status_code == 200


async def test_a_conversation_is_not_deleted_while_a_turn_or_auto_mode_runs(turn_api, engine) -> None:
    conv, _ = await make_group(turn_api)
    url = f"/v1/conversations/{conv['id']}"
    held = await repository.start_turn(session_factory(engine), "alice", conv["id"], None, None, stale_after_s=60)
    try:
        busy = await turn_api.client.delete(url, headers=ALICE)
        assert busy.status_code == 409 and busy.json()["code"] == "turn_in_progress"
    finally:
        await repository.finish_turn(session_factory(engine), held.turn.id, status="completed", result=None, error=None,
                                     intent=None, emotion=None, timings={}, usage={})  # fmt: skip
    async with session_factory(engine)() as session:
        run = AutoRun(conversation_id=conv["id"], owner_id="alice", status="running", turns=3, turns_done=0, delay_ms=0,
                      running_lock=conv["id"], deadline_at=utcnow() + timedelta(minutes=5))  # fmt: skip
        session.add(run)
        await session.commit()
    busy = await turn_api.client.delete(url, headers=ALICE)
    assert busy.status_code == 409 and busy.json()["code"] == "auto_mode_running"
    async with session_factory(engine)() as session:
        ended = await session.get(AutoRun, run.id)
        ended.running_lock, ended.status = None, "stopped"
        await session.commit()
    assert (await turn_api.client.delete(url, headers=ALICE)).status_code == 204


async def test_reading_a_conversation_names_the_turn_running_in_it(turn_api, engine) -> None:
    """A client opening the conversation mid-turn (a Continue has saved no message yet) replays it."""
    conv, _ = await make_group(turn_api)
    url = f"/v1/conversations/{conv['id']}"
    assert (await turn_api.client.get(url, headers=ALICE)).json()["runningTurnId"] is None
    held = await repository.start_turn(session_factory(engine), "alice", conv["id"], None, None, stale_after_s=60)
    try:
        assert (await turn_api.client.get(url, headers=ALICE)).json()["runningTurnId"] == held.turn.id
    finally:
        await repository.finish_turn(session_factory(engine), held.turn.id, status="completed", result=None, error=None,
                                     intent=None, emotion=None, timings={}, usage={})  # fmt: skip
    assert (await turn_api.client.get(url, headers=ALICE)).json()["runningTurnId"] is None
