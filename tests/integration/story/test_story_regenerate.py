"""Regenerating an agent message uses the plain actor path: no Story prepare and no Story write."""

from __future__ import annotations

from tests.integration.conftest import ALICE
from tests.integration.story.conftest import say, state_row, story_calls, story_group


async def test_regenerate_does_not_prepare_or_write_story(story_api, world, engine) -> None:
    conv, (lia, _, _) = await story_group(story_api, world)
    body = await say(story_api, conv["id"], "我把铜钥匙递给莉娅")
    before = await state_row(engine, conv["id"], lia["id"])
    calls = len(story_calls(world))
    msg = body["agentMessages"][0]
    world.handlers["actor"] = lambda req: "莉娅接过钥匙，仔细端详。"  # a different reply than the first
    resp = await story_api.client.post(f"/v1/conversations/{conv['id']}/messages/{msg['id']}/regenerate", headers=ALICE)
    assert resp.status_code == 200, resp.text
    after = await state_row(engine, conv["id"], lia["id"])
    assert len(story_calls(world)) == calls
    assert (after.revision, after.envelope) == (before.revision, before.envelope)
    assert "[CURRENT STORY STAGE]" not in world.model.history[-1].messages[0].content
