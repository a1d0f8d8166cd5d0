"""The seed's three-turn walk-through, end to end over HTTP with the function fake."""

from __future__ import annotations

from tests.integration.conftest import ALICE
from tests.integration.story.conftest import CUE_PATROL, NORMAL, requests, saved_state, say, state_row, story_group

U1 = "我把铜钥匙递给莉娅，但先不进城。"
U2 = "不用去核对了，先把钥匙还我。"
U3 = "我去迎接巡逻队。"
A1 = "莉娅接过钥匙，指尖停在柄端的旧徽记上。"
A1_EDITED = "莉娅只看了一眼钥匙，没有接过。这是旧档案馆的标记。"
A2 = "莉娅停下脚步，把钥匙递回给你。"
A3 = "巡逻队的脚步声越来越近。"


async def test_three_turns_adopt_saved_prose_and_settle_only_on_evidence(story_api, world, engine) -> None:
    conv, (lia, _, _) = await story_group(story_api, world)
    world.handlers["actor"] = [A1, A2, A3]
    world.handlers["story.prepare"] = [NORMAL, NORMAL, CUE_PATROL]
    world.handlers["story.settle"] = {
        "status": "assessed", "emotion": None, "new_pursuit": "", "line_progress": [],
        "completed_goals": [{"goal_id": "g0", "evidence": "这是旧档案馆的标记"},
                            {"goal_id": "g1", "evidence": "莉娅打开了档案馆"}],
    }  # fmt: skip

    t1 = await say(story_api, conv["id"], U1)
    a1 = t1["agentMessages"][0]
    assert a1["agentId"] == lia["id"] and a1["metadata"]["story"]["outcome"] == "waiting_for_acceptance"
    actor_system = requests(world, "actor")[0].messages[0].content
    assert "[CURRENT STORY STAGE]" in actor_system and "[STORY STAGE RULES]" in actor_system
    assert "不要复述用户的话" in actor_system  # the stage rules in the chat's language
    s1 = await saved_state(engine, conv["id"], lia["id"])
    assert s1.status == "waiting_for_acceptance" and s1.pending_actor.message_id == a1["id"]
    assert s1.pending_actor.user_message_id == t1["userMessage"]["id"]
    row = await state_row(engine, conv["id"], lia["id"])
    assert A1.encode() not in row.envelope and row.revision == 1

    edit = await story_api.client.patch(f"/v1/conversations/{conv['id']}/messages/{a1['id']}",
                                        json={"content": A1_EDITED}, headers=ALICE)
    assert edit.status_code == 200, edit.text

    t2 = await say(story_api, conv["id"], U2)
    # A1 was adopted in the background right after turn 1; the edit makes turn 2 adopt again.
    advances = [r.messages[-1].content for r in requests(world, "story.advance")]
    assert any(A1_EDITED in a and A1 not in a and U2 not in a for a in advances)
    s2 = await saved_state(engine, conv["id"], lia["id"])
    a2 = t2["agentMessages"][0]
    assert s2.accepted_message_id == a1["id"] and s2.pending_actor.message_id == a2["id"]
    assert s2.events, (t2["agentMessages"][0]["metadata"]["story"], s2)
    assert [r.message_id for r in s2.events[0].refs] == [a1["id"]]
    assert t2["agentMessages"][0]["metadata"]["story"]["revision"] == 2

    await say(story_api, conv["id"], U3)
    settle = requests(world, "story.settle")
    assert len(settle) == 1
    settle_input = settle[0].messages[-1].content
    assert A1_EDITED in settle_input and A2 in settle_input and U3 not in settle_input
    s3 = await saved_state(engine, conv["id"], lia["id"])
    done = {g.id for g in s3.narrative.cycle.pending if g.done}
    assert done == {"g0"}  # g1's evidence does not occur in the accepted text
    assert s3.world.foreground.id == "bg-patrol"


async def test_continue_is_the_seeds_continue_action(story_api, world, engine) -> None:
    """A Continue prepares a turn keyed by the source position and anchored to the last user
    message; its reply waits for acceptance like any other."""
    conv, (lia, _, _) = await story_group(story_api, world)
    world.handlers["actor"] = [A1, A2]
    t1 = await say(story_api, conv["id"], U1)
    resp = await story_api.client.post(f"/v1/conversations/{conv['id']}/continue", json={"agentId": lia["id"]},
                                       headers=ALICE)  # fmt: skip
    assert resp.status_code == 201, resp.text
    body = resp.json()
    story = body["agentMessages"][0]["metadata"]["story"]
    assert story["outcome"] == "waiting_for_acceptance" and story["guided"]
    state = await saved_state(engine, conv["id"], lia["id"])
    assert state.pending_actor.message_id == body["agentMessages"][0]["id"]
    assert state.pending_actor.action_kind == "continue"
    assert state.pending_actor.user_message_id == t1["userMessage"]["id"]
