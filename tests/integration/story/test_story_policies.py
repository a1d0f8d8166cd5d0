"""The seed's recovery table, row by row, through real group turns."""

from __future__ import annotations

from sqlalchemy import update

from app.db.engine import create_engine, session_factory
from app.db.models import StoryState
from tests.integration.conftest import ADMIN, ALICE
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
    world.handlers["story.advance"] = RuntimeError("model down")  # in the background after t1, and in t2
    t1 = await say(story_api, conv["id"], "你好")
    # The seed's recovery table: the request fails and waits for recovery (no reply pretending
    # nothing changed); the user message stays, the state keeps the old pending reply.
    t2 = (await story_api.client.post(f"/v1/conversations/{conv['id']}/turns", json={"content": "然后呢"},
                                      headers=ALICE)).json()  # fmt: skip
    assert t2["status"] == "failed" and t2["agentMessages"] == []
    assert t2["error"]["code"] == "all_replies_dropped"
    assert t2["error"]["details"]["agents"][0]["problems"] == ["story_advance_pending"]
    row = await state_row(engine, conv["id"], lia["id"])
    assert row.revision == 1 and row.last_outcome["kind"] == "advance_pending"
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
    long_summary = "".join(chr(0x4E00 + i) for i in range(2000))  # long, and no loop (a loop is an invalid answer)
    world.handlers["story_init.world"] = {**INIT, "foreground": {**INIT["foreground"], "summary": long_summary}}
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
    tools = t2["agentMessages"][0]["metadata"]["story"]["toolCalls"]
    assert not any(t.startswith("pov_advance_world") for t in tools) and len(requests(world, "story_init.world")) == 2
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
    # the record left the state (only its id stays) for the quarantine table
    assert s4.quarantine == [] and s4.quarantined_ids == ["ev-key"] and not any(e.closed for e in s4.events)
    row = await state_row(engine, conv["id"], lia["id"])
    assert row.quarantine == []
    report = (await story_api.client.get(f"/v1/conversations/{conv['id']}/story/{lia['id']}", headers=ALICE)).json()
    assert report["report"]["quarantine"][0]["messageIds"] == [t1["agentMessages"][0]["id"]]
    assert report["report"]["quarantine"][0]["attemptPositions"] == [3, 5, 7]


async def test_an_admin_lists_releases_and_discards_quarantined_events(story_api, world, engine) -> None:
    from tests.integration.story.conftest import CUE_PATROL, NORMAL

    conv, (lia, _, _) = await story_group(story_api, world)
    unknown = {"status": "unknown", "emotion": None, "new_pursuit": "", "line_progress": [], "completed_goals": []}
    world.handlers["story.prepare"] = [NORMAL, CUE_PATROL, NORMAL, NORMAL, NORMAL, NORMAL]
    world.handlers["story.settle"] = unknown
    world.handlers["actor"] = ["莉娅点点头。", "巡逻队来了。", "莉娅皱眉。", "莉娅叹气。", "莉娅看着远方。", "莉娅笑了。"]
    for text in ("你好", "我去迎接巡逻队。", "然后呢？", "还有吗？"):
        await say(story_api, conv["id"], text)
    base = f"/v1/conversations/{conv['id']}/story/{lia['id']}/quarantine"
    assert (await story_api.client.get(base, headers=ALICE)).status_code == 403  # admins only
    [rec] = (await story_api.client.get(base, headers=ADMIN)).json()
    assert rec["eventId"] == "ev-key" and rec["status"] == "quarantined" and rec["attemptPositions"] == [3, 5, 7]
    released = await story_api.client.post(f"{base}/{rec['id']}/release", headers=ADMIN)
    assert released.status_code == 200 and released.json()["status"] == "released"
    s = await saved_state(engine, conv["id"], lia["id"])
    assert [e.settle_key for e in s.events if e.closed] == ["ev-key"] and s.quarantined_ids == []
    again = await story_api.client.post(f"{base}/{rec['id']}/release", headers=ADMIN)
    assert again.status_code == 409 and again.json()["code"] == "quarantine_resolved"
    # the next turn settles the released event again (this time it is assessed)
    world.handlers["story.settle"] = dict(unknown, status="assessed")
    t5 = await say(story_api, conv["id"], "我们走吧。")
    assert "narrative_settle_event:settled" in t5["agentMessages"][0]["metadata"]["story"]["toolCalls"], t5["agentMessages"][0]["metadata"]["story"]
    s = await saved_state(engine, conv["id"], lia["id"])
    assert not any(e.closed for e in s.events) and "ev-key" in s.narrative.clock.settled_event_ids
    assert (await story_api.client.get(base, headers=ADMIN)).json() == []
    listed = (await story_api.client.get(f"{base}?status=released", headers=ADMIN)).json()
    assert [r["id"] for r in listed] == [rec["id"]]
    missing = await story_api.client.post(f"{base}/nope/discard", headers=ADMIN)
    assert missing.status_code == 404


async def test_a_discarded_record_stays_out_of_the_state(story_api, world, engine) -> None:
    from tests.integration.story.conftest import CUE_PATROL, NORMAL

    conv, (lia, _, _) = await story_group(story_api, world)
    world.handlers["story.prepare"] = [NORMAL, CUE_PATROL, NORMAL, NORMAL]
    world.handlers["story.settle"] = {"status": "unknown", "emotion": None, "new_pursuit": "", "line_progress": [],
                                      "completed_goals": []}  # fmt: skip
    world.handlers["actor"] = ["莉娅点点头。", "巡逻队来了。", "莉娅皱眉。", "莉娅叹气。"]
    for text in ("你好", "我去迎接巡逻队。", "然后呢？", "还有吗？"):
        await say(story_api, conv["id"], text)
    base = f"/v1/conversations/{conv['id']}/story/{lia['id']}/quarantine"
    [rec] = (await story_api.client.get(base, headers=ADMIN)).json()
    before = await state_row(engine, conv["id"], lia["id"])
    resp = await story_api.client.post(f"{base}/{rec['id']}/discard", headers=ADMIN)
    assert resp.status_code == 200 and resp.json()["status"] == "discarded" and resp.json()["resolvedAt"]
    after = await state_row(engine, conv["id"], lia["id"])
    assert after.revision == before.revision  # discarding does not touch the state
    report = (await story_api.client.get(f"/v1/conversations/{conv['id']}/story/{lia['id']}", headers=ALICE)).json()
    assert report["report"]["quarantine"] == []


async def test_a_state_that_cannot_fit_halts_the_story_with_state_too_large_instead_of_looping(story_api, world,
                                                                                               engine) -> None:
    conv, (lia, _, _) = await story_group(story_api, world, story={**STORY_ON, "maxStateBytes": 4000})
    world.handlers["actor"] = ["莉娅点点头。", "莉娅转过身。", "莉娅笑了。"]
    t1 = await say(story_api, conv["id"], "你好")
    story = t1["agentMessages"][0]["metadata"]["story"]
    assert story["outcome"] == "state_too_large", story
    assert {"state_compacted", "state_too_large"} <= _codes(t1["agentMessages"][0]["metadata"])
    row = await state_row(engine, conv["id"], lia["id"])
    assert row.status == "state_too_large" and len(row.envelope) <= 4000
    calls = len(story_calls(world))
    for text in ("还在吗？", "莉娅？"):
        t = await say(story_api, conv["id"], text)
        assert t["agentMessages"], t  # the reply still goes out
        assert t["agentMessages"][0]["metadata"]["story"]["prepareOutcome"] == "no_story"
    assert len(story_calls(world)) == calls  # halted: no adoption loop, no paid model calls
    report = (await story_api.client.get(f"/v1/conversations/{conv['id']}/story/{lia['id']}", headers=ALICE)).json()
    assert report["status"] == "state_too_large" and report["lastFailure"]["reason"].startswith("state_too_large")
    assert report["failureCount"] >= 2
