"""The seed's recovery table, row by row, through real group turns."""

from __future__ import annotations

from sqlalchemy import update

from app.db.engine import create_engine, session_factory
from app.db.models import StoryState
from tests.integration.conftest import ALICE
from tests.integration.story.conftest import (
    ADV, INIT, STORY_ON, requests, saved_state, say, state_row, story_calls, story_group,
)
from tests.integration.turns.fakes import select as choose

META_KEYS = {"outcome", "prepareOutcome", "revision", "toolCalls", "diagnostics", "usage", "prepareMs", "settleMs", "guided"}


def _codes(meta: dict) -> set[str]:
    return {d["code"] for d in meta["story"]["diagnostics"]}


async def test_story_off_makes_no_story_calls_and_no_state(story_api, world, engine) -> None:
    conv, (lia, _, _) = await story_group(story_api, world, story={"enabled": False})
    body = await say(story_api, conv["id"], "我今天好难过")
    assert story_calls(world) == []
    assert "story" not in body["agentMessages"][0]["metadata"]
    assert "[CURRENT STORY STAGE]" not in requests(world, "actor")[0].messages[0].content
    assert await state_row(engine, conv["id"], lia["id"]) is None


async def test_each_agent_message_carries_the_story_turn_record(story_api, world) -> None:
    conv, (lia, heng, _) = await story_group(story_api, world, reply_limit=2)
    world.handlers["select"] = choose(lia["id"], heng["id"])
    body = await say(story_api, conv["id"], "你们好")
    assert len(body["agentMessages"]) == 2
    for m in body["agentMessages"]:
        story = m["metadata"]["story"]
        assert META_KEYS <= set(story)
        assert story["outcome"] == "waiting_for_acceptance" and story["revision"] == 1 and story["guided"]
        assert story["toolCalls"][0] == "story_init:ok" and "narrative_deal_beat" in story["toolCalls"]
    assert len(requests(world, "story_init.world")) == 2  # one state per agent


async def test_initializer_invalid_twice_replies_without_guidance_and_writes_nothing(story_api, world, engine) -> None:
    conv, (lia, _, _) = await story_group(story_api, world)
    world.handlers["story_init.world"] = "not json"
    body = await say(story_api, conv["id"], "你好")
    story = body["agentMessages"][0]["metadata"]["story"]
    assert story["outcome"] == "no_story" and not story["guided"] and "story_init_failed" in _codes(body["agentMessages"][0]["metadata"])
    assert len(requests(world, "story_init.world")) == 2  # one repair, two responses
    assert "[CURRENT STORY STAGE]" not in requests(world, "actor")[0].messages[0].content
    row = await state_row(engine, conv["id"], lia["id"])
    assert row.envelope is None and row.revision == 0


async def test_initializer_unavailable_replies_without_guidance(story_api, world, engine) -> None:
    conv, (lia, _, _) = await story_group(story_api, world)
    world.handlers["story_init.world"] = RuntimeError("model down")
    body = await say(story_api, conv["id"], "你好")
    meta = body["agentMessages"][0]["metadata"]
    assert meta["story"]["outcome"] == "no_story" and {"model_failed", "story_init_failed"} <= _codes(meta)
    assert (await state_row(engine, conv["id"], lia["id"])).envelope is None


async def test_advance_failure_keeps_the_old_state_and_retries_next_turn(story_api, world, engine) -> None:
    conv, (lia, _, _) = await story_group(story_api, world)
    world.handlers["actor"] = ["莉娅点点头。", "莉娅沉默了。", "莉娅笑了。"]
    t1 = await say(story_api, conv["id"], "你好")
    world.handlers["story.advance"] = RuntimeError("model down")
    t2 = await say(story_api, conv["id"], "然后呢")
    story = t2["agentMessages"][0]["metadata"]["story"]
    assert story["outcome"] == "advance_pending" and not story["guided"] and story["revision"] == 1
    assert (await saved_state(engine, conv["id"], lia["id"])).pending_actor.message_id == t1["agentMessages"][0]["id"]
    world.handlers["story.advance"] = ADV
    t3 = await say(story_api, conv["id"], "再说说")
    assert t3["agentMessages"][0]["metadata"]["story"]["outcome"] == "waiting_for_acceptance"
    s3 = await saved_state(engine, conv["id"], lia["id"])
    assert s3.accepted_message_id == t1["agentMessages"][0]["id"]
    assert s3.pending_actor.message_id == t3["agentMessages"][0]["id"]


async def test_actor_failure_saves_no_story_state(story_api, world, engine) -> None:
    conv, (lia, _, _) = await story_group(story_api, world)
    world.handlers["actor"] = RuntimeError("actor down")
    resp = await story_api.client.post(f"/v1/conversations/{conv['id']}/turns", json={"content": "你好"}, headers=ALICE)
    assert resp.json()["status"] == "failed"
    assert len(requests(world, "story_init.world")) == 1
    row = await state_row(engine, conv["id"], lia["id"])
    assert row.envelope is None and row.revision == 0


async def test_cas_conflict_is_reported_and_the_reply_stays(story_api, world, engine, db_url) -> None:
    conv, (lia, _, _) = await story_group(story_api, world)

    async def meanwhile_another_writer(_req):
        eng = create_engine(db_url)  # the app's event loop: its own engine
        async with session_factory(eng)() as s:
            await s.execute(update(StoryState).where(StoryState.agent_id == lia["id"]).values(revision=StoryState.revision + 1))
            await s.commit()
        await eng.dispose()
        return "莉娅看着你。"

    world.handlers["actor"] = meanwhile_another_writer
    body = await say(story_api, conv["id"], "你好")
    meta = body["agentMessages"][0]["metadata"]
    assert meta["story"]["outcome"] == "stale_write_rejected" and "stale_write_rejected" in _codes(meta)
    assert body["agentMessages"][0]["content"] == "莉娅看着你。"
    row = await state_row(engine, conv["id"], lia["id"])
    assert row.revision == 1 and row.envelope is None  # the other writer's revision, nothing of ours


async def test_state_over_max_bytes_fails_instead_of_being_trimmed(story_api, world, engine) -> None:
    conv, (lia, _, _) = await story_group(story_api, world, story={**STORY_ON, "maxStateBytes": 4000})
    world.handlers["story_init.world"] = {**INIT, "foreground": {**INIT["foreground"], "summary": "长" * 2000}}
    body = await say(story_api, conv["id"], "你好")
    meta = body["agentMessages"][0]["metadata"]
    assert meta["story"]["outcome"] == "failed" and "state_too_large" in _codes(meta)
    row = await state_row(engine, conv["id"], lia["id"])
    assert row.status == "failed" and row.envelope is None


async def test_deleted_pending_reply_reinitializes_from_visible_history(story_api, world, engine) -> None:
    conv, (lia, _, _) = await story_group(story_api, world)
    world.handlers["actor"] = ["莉娅点点头。", "莉娅转过身。"]
    t1 = await say(story_api, conv["id"], "你好")
    a1 = t1["agentMessages"][0]["id"]
    resp = await story_api.client.delete(f"/v1/conversations/{conv['id']}/messages/{a1}", headers=ALICE)
    assert resp.status_code == 204, resp.text
    t2 = await say(story_api, conv["id"], "再见")
    assert requests(world, "story.advance") == [] and len(requests(world, "story_init.world")) == 2
    assert t2["agentMessages"][0]["metadata"]["story"]["revision"] == 2
    assert "莉娅点点头" not in requests(world, "story_init.world")[1].messages[-1].content


async def test_unknown_settlement_is_retried_then_quarantined_with_the_cas_write(story_api, world, engine) -> None:
    from tests.integration.story.conftest import CUE_PATROL, NORMAL

    conv, (lia, _, _) = await story_group(story_api, world)
    world.handlers["actor"] = ["莉娅点点头。", "巡逻队来了。", "莉娅皱眉。", "莉娅叹气。"]
    world.handlers["story.prepare"] = [NORMAL, CUE_PATROL, NORMAL, NORMAL]
    world.handlers["story.settle"] = {"status": "unknown", "emotion": None, "new_pursuit": "", "line_progress": [],
                                      "completed_goals": []}  # fmt: skip
    t1 = await say(story_api, conv["id"], "你好")
    for text in ("我去迎接巡逻队。", "然后呢？"):
        await say(story_api, conv["id"], text)
        s = await saved_state(engine, conv["id"], lia["id"])
        assert [e.event_id for e in s.events if e.closed] == ["ev-key"] and s.quarantine == []
    t4 = await say(story_api, conv["id"], "还有吗？")
    assert "story_event_quarantine" in _codes(t4["agentMessages"][0]["metadata"])
    s4 = await saved_state(engine, conv["id"], lia["id"])
    assert [q.event_id for q in s4.quarantine] == ["ev-key"] and not any(e.closed for e in s4.events)
    assert s4.quarantine[0].attempt_positions == [3, 5, 7]
    row = await state_row(engine, conv["id"], lia["id"])
    assert row.quarantine[0]["event_id"] == "ev-key"
    report = (await story_api.client.get(f"/v1/conversations/{conv['id']}/story/{lia['id']}", headers=ALICE)).json()
    assert report["report"]["quarantine"][0]["messageIds"] == [t1["agentMessages"][0]["id"]]
