"""GET /v1/conversations/{id}/story/{agentId}: owner sees the report, admin also the state."""

from __future__ import annotations

from tests.integration.conftest import ADMIN, ALICE, BOB
from tests.integration.story.conftest import say, story_group


def _url(conv_id: str, agent_id: str) -> str:
    return f"/v1/conversations/{conv_id}/story/{agent_id}"


async def test_owner_sees_the_report_without_hidden_threads(story_api, world) -> None:
    conv, (lia, heng, _) = await story_group(story_api, world)
    before = await story_api.client.get(_url(conv["id"], lia["id"]), headers=ALICE)
    assert before.status_code == 200 and before.json()["status"] == "not_started"
    t1 = await say(story_api, conv["id"], "你好")
    resp = await story_api.client.get(_url(conv["id"], lia["id"]), headers=ALICE)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["status"] == "waiting_for_acceptance" and body["revision"] == 1 and body["state"] is None
    report = body["report"]
    assert report["foreground"] == {"id": "ev-key", "title": "莉娅核验铜钥匙", "phase": "start", "rounds": 0}
    assert report["main"]["direction"] == "查明钥匙对应的旧城设施" and report["main"]["cursor"] == 0
    assert [g["id"] for g in report["pendingGoals"]] == ["g0", "g1", "g2", "g3", "g4"]
    assert report["pendingMessageId"] == t1["agentMessages"][0]["id"] and report["quarantine"] == []
    assert "灰烬公会" not in resp.text and "seed-c" not in resp.text  # undercurrents and seeds stay hidden
    other = await story_api.client.get(_url(conv["id"], heng["id"]), headers=ALICE)
    assert other.json()["status"] == "not_started"


async def test_other_user_gets_404_and_admin_sees_the_state(story_api, world) -> None:
    conv, (lia, _, _) = await story_group(story_api, world)
    await say(story_api, conv["id"], "你好")
    assert (await story_api.client.get(_url(conv["id"], lia["id"]), headers=BOB)).status_code == 404
    admin = await story_api.client.get(_url(conv["id"], lia["id"]), headers=ADMIN)
    assert admin.status_code == 200
    state = admin.json()["state"]
    assert state["world"]["undercurrents"][0]["owner"] == "灰烬公会" and admin.json()["report"] is not None


async def test_unknown_agent_or_conversation_is_404(story_api, world) -> None:
    conv, _ = await story_group(story_api, world)
    assert (await story_api.client.get(_url(conv["id"], "nobody"), headers=ALICE)).status_code == 404
    assert (await story_api.client.get(_url("nope", "nobody"), headers=ADMIN)).status_code == 404


async def test_the_quarantine_status_filter_takes_only_its_documented_values(story_api, world) -> None:
    conv, (lia, _, _) = await story_group(story_api, world)
    url = _url(conv["id"], lia["id"]) + "/quarantine"
    for status in ("quarantined", "released", "discarded", "all"):
        resp = await story_api.client.get(url, params={"status": status}, headers=ADMIN)
        assert resp.status_code == 200 and resp.json() == [], (status, resp.text)
    bad = await story_api.client.get(url, params={"status": "bogus"}, headers=ADMIN)
    assert bad.status_code == 422 and bad.json()["code"] == "validation_failed", bad.text
