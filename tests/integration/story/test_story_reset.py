"""Issue 31: ``POST …/story/{agentId}/reset`` — a halted or broken scope starts over from a fresh
initialisation; the old state is kept for an admin and the reset shows in the Story report."""

from __future__ import annotations

from tests.integration.conftest import ADMIN, ALICE, BOB
from tests.integration.story.conftest import STORY_ON, requests, say, state_row, story_group


async def _halted(story_api, world, engine):
    conv, members = await story_group(story_api, world, story={**STORY_ON, "maxStateBytes": 4000})
    world.handlers["actor"] = ["莉娅点点头。", "莉娅转过身。", "莉娅笑了。", "莉娅挥手。"]
    t1 = await say(story_api, conv["id"], "你好")
    assert t1["agentMessages"][0]["metadata"]["story"]["outcome"] == "state_too_large"
    row = await state_row(engine, conv["id"], members[0]["id"])
    assert row.status == "state_too_large"
    return conv, members, row


async def test_a_halted_scope_starts_over_after_a_reset_and_the_old_state_is_kept(story_api, world, engine) -> None:
    conv, (lia, _, _), halted = await _halted(story_api, world, engine)
    base = f"/v1/conversations/{conv['id']}/story/{lia['id']}"
    patched = await story_api.client.patch(f"/v1/conversations/{conv['id']}", headers=ALICE,
                                           json={"settings": {"story": {"maxStateBytes": 60000}}})  # fmt: skip
    assert patched.status_code == 200, patched.text
    still = await say(story_api, conv["id"], "还在吗？")  # a bigger limit alone does not restart a halted scope
    assert still["agentMessages"][0]["metadata"]["story"]["prepareOutcome"] == "no_story"

    resp = await story_api.client.post(f"{base}/reset", headers=ALICE)
    assert resp.status_code == 200, resp.text
    out = resp.json()
    assert out["previousStatus"] == "state_too_large" and out["previousRevision"] == halted.revision
    assert out["revision"] == halted.revision + 1
    report = (await story_api.client.get(base, headers=ALICE)).json()
    assert report["status"] == "reset" and report["report"] is None
    assert report["lastOutcome"]["kind"] == "reset" and report["lastOutcome"]["by"] == "alice"
    assert report["lastOutcome"]["lastReset"]["archivedId"] == out["archivedId"]
    assert report["lastFailure"]["reason"].startswith("state_too_large")  # what failed before is still shown
    assert report["failureCount"] == 0

    inits = len(requests(world, "story_init.world"))
    again = await say(story_api, conv["id"], "我们重新开始吧")
    story = again["agentMessages"][0]["metadata"]["story"]
    assert story["outcome"] == "waiting_for_acceptance" and story["toolCalls"][0] == "story_init:ok", story
    assert len(requests(world, "story_init.world")) == inits + 1
    after = (await story_api.client.get(base, headers=ALICE)).json()
    assert after["status"] == "waiting_for_acceptance" and after["lastOutcome"]["lastReset"]["total"] == 1

    kept = await story_api.client.get(f"{base}/quarantine?status=reset", headers=ADMIN)
    assert kept.status_code == 200, kept.text
    (record,) = kept.json()
    assert record["id"] == out["archivedId"] and record["kind"] == "reset" and record["status"] == "reset"
    assert record["previousState"]["status"] == "state_too_large"
    assert "reset by alice" in record["reason"]
    open_only = (await story_api.client.get(f"{base}/quarantine", headers=ADMIN)).json()
    assert open_only == []  # not an event waiting for settlement
    release = await story_api.client.post(f"{base}/quarantine/{record['id']}/release", headers=ADMIN)
    assert release.status_code == 409 and release.json()["code"] == "quarantine_resolved"


async def test_reset_is_for_the_owner_or_an_admin_and_needs_a_started_scope(story_api, world, engine) -> None:
    conv, (lia, heng, _), _ = await _halted(story_api, world, engine)
    base = f"/v1/conversations/{conv['id']}/story"
    other = await story_api.client.post(f"{base}/{lia['id']}/reset", headers=BOB)
    assert other.status_code == 404 and other.json()["code"] == "conversation_not_found"
    not_started = await story_api.client.post(f"{base}/{heng['id']}/reset", headers=ALICE)
    assert not_started.status_code == 409 and not_started.json()["code"] == "story_not_started"
    stranger = await story_api.client.post(f"{base}/nobody/reset", headers=ALICE)
    assert stranger.status_code == 404 and stranger.json()["code"] == "agent_not_found"
    by_admin = await story_api.client.post(f"{base}/{lia['id']}/reset", headers=ADMIN)
    assert by_admin.status_code == 200, by_admin.text
    twice = await story_api.client.post(f"{base}/{lia['id']}/reset", headers=ALICE)
    assert twice.status_code == 200 and twice.json()["previousStatus"] == "reset"  # idempotent in effect
    row = await state_row(engine, conv["id"], lia["id"])
    assert row.envelope is None and row.status == "reset"


async def test_the_member_scoped_path_is_the_same_reset(story_api, world, engine) -> None:
    conv, (lia, heng, _), _ = await _halted(story_api, world, engine)
    base = f"/v1/conversations/{conv['id']}/agents"
    not_started = await story_api.client.post(f"{base}/{heng['id']}/story/reset", headers=ALICE)
    assert not_started.status_code == 409 and not_started.json()["code"] == "story_not_started"
    other = await story_api.client.post(f"{base}/{lia['id']}/story/reset", headers=BOB)
    assert other.status_code == 404 and other.json()["code"] == "conversation_not_found"
    resp = await story_api.client.post(f"{base}/{lia['id']}/story/reset", headers=ALICE)
    assert resp.status_code == 200, resp.text
    row = await state_row(engine, conv["id"], lia["id"])
    assert row.envelope is None and row.status == "reset"
