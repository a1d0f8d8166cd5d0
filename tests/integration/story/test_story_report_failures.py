"""The Story report says what happened last, also when a turn wrote no state (issue 9, item 6):
after failed inits it is ``init_failed`` with the reason, when, and how many turns in a row
failed, never ``not_started`` with ``lastOutcome: null``."""

from __future__ import annotations

from datetime import datetime

from tests.integration.conftest import ALICE
from tests.integration.story.conftest import INIT, say, story_group


def _url(conv_id: str, agent_id: str) -> str:
    return f"/v1/conversations/{conv_id}/story/{agent_id}"


async def test_failed_inits_are_reported_with_reason_time_and_count_until_one_succeeds(story_api, world) -> None:
    conv, (lia, _, _) = await story_group(story_api, world)
    world.handlers["story_init.world"] = ["{not json", "{not json", "{not json", "{not json", INIT]

    for turn in (1, 2):
        body = await say(story_api, conv["id"], f"你好 {turn}")
        assert body["agentMessages"][0]["metadata"]["story"]["toolCalls"] == ["story_init:failed"]
        report = (await story_api.client.get(_url(conv["id"], lia["id"]), headers=ALICE)).json()
        assert report["status"] == "init_failed" and report["revision"] == 0 and report["failureCount"] == turn
        last = report["lastOutcome"]
        assert last["kind"] == "init_failed" and last["failures"] == turn and "not valid JSON" in last["reason"]
        assert datetime.fromisoformat(last["at"]) and last["toolCalls"] == ["story_init:failed"]

    await say(story_api, conv["id"], "你好 3")
    report = (await story_api.client.get(_url(conv["id"], lia["id"]), headers=ALICE)).json()
    assert report["status"] == "waiting_for_acceptance" and report["revision"] == 1 and report["failureCount"] == 0
    assert report["lastOutcome"]["kind"] == "waiting_for_acceptance" and "reason" not in report["lastOutcome"]
    assert report["report"]["foreground"]["id"] == "ev-key"


async def test_a_model_outage_during_init_names_the_error(story_api, world) -> None:
    conv, (lia, _, _) = await story_group(story_api, world)
    world.handlers["story_init.world"] = RuntimeError("upstream down")
    await say(story_api, conv["id"], "你好")
    report = (await story_api.client.get(_url(conv["id"], lia["id"]), headers=ALICE)).json()
    assert report["status"] == "init_failed" and report["failureCount"] == 1
    assert report["lastOutcome"]["reason"].startswith("model_failed: ") and "upstream down" in report["lastOutcome"]["reason"]
