"""The seed's Story walk-through over real HTTP against the schema-following simulator, on both databases.

The scripted fakes of the other Story tests hand back JSON written for them and never look at
the schema; here every Story call goes through the real gateway to ``companion simulate-llm``'s
server, which answers from the schema each request sends (as OpenAI strict mode or a llama.cpp
grammar would). Round 1's Story never started this way. Asserted: the init succeeds on the
model path (first answer valid, no repair, no fallback), every later Story call too, the report
reaches ``waiting_for_acceptance`` with the revision advancing each turn, the edited reply is
what gets adopted, and the settlement of an event runs (its evidence quotes accepted).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import ALICE, Api

STORY_ON = {"enabled": True, "modelConfigId": "default"}
U1 = "我把铜钥匙递给莉娅，但先不进城。"
U2 = "莉娅，不用去核对了，先把钥匙还我。"
U3 = "莉娅，我去迎接巡逻队。"
MORE = "莉娅，然后呢？"
A1_EDITED = "莉娅只看了一眼钥匙，没有接过。这是旧档案馆的标记。"
# A Story call that needed a repair, fell back or failed says so with one of these codes.
OFF_MODEL_PATH = {"invalid_model_output", "repair_exhausted", "model_failed", "model_timeout", "story_init_failed",
                  "classification_defaulted_normal", "advance_pending", "plan_failed", "rebranch_failed", "story_error"}
SIMULATOR_SEED = 23
MAX_EXTRA_TURNS = 4  # the first event ends on its own after develop_max + 1 accepted rounds


@pytest.fixture
async def wire(sim_api: Api) -> Api:
    return sim_api


async def _say(api: Api, conv_id: str, text: str) -> dict[str, Any]:
    resp = await api.client.post(f"/v1/conversations/{conv_id}/turns", json={"content": text}, headers=ALICE)
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert body["status"] == "completed", body.get("error")
    return body


async def _report(api: Api, conv_id: str, agent_id: str) -> dict[str, Any]:
    resp = await api.client.get(f"/v1/conversations/{conv_id}/story/{agent_id}", headers=ALICE)
    assert resp.status_code == 200, resp.text
    return resp.json()


def _story(turn: dict[str, Any], agent_id: str) -> dict[str, Any]:
    message = next(m for m in turn["agentMessages"] if m["replyKind"] == "primary")
    assert message["agentId"] == agent_id  # the user names 莉娅, so she replies
    story = message["metadata"]["story"]
    off = [d for d in story["diagnostics"] if d["code"] in OFF_MODEL_PATH]
    assert off == [], off  # every Story call decoded on its first answer, nothing fell back
    assert story["outcome"] == "waiting_for_acceptance", story
    return story


async def test_the_seed_walkthrough_runs_on_the_model_path_against_the_simulator(wire: Api) -> None:
    lia = await wire.agent("莉娅", headline="城门守卫", description="莉娅负责城门登记，不得泄露内城秘密。",
                           storyBackground="你们站在城门口。", capabilities={"comfort": 0.9})
    others = [await wire.agent(n, capabilities=c) for n, c in (("周衡", {"analysis": 0.9}), ("小跳", {"playful": 0.9}))]
    conv = await wire.group(lia["id"], *(a["id"] for a in others), settings={"replyLimit": 1, "story": STORY_ON})
    assert (await _report(wire, conv["id"], lia["id"]))["status"] == "not_started"

    t1 = await _say(wire, conv["id"], U1)
    s1 = _story(t1, lia["id"])
    assert s1["toolCalls"][0] == "story_init:ok" and "narrative_plan_cycle:planned" in s1["toolCalls"]
    assert s1["revision"] == 1
    r1 = await _report(wire, conv["id"], lia["id"])
    assert r1["status"] == "waiting_for_acceptance" and r1["revision"] == 1 and r1["failureCount"] == 0
    assert r1["lastOutcome"]["kind"] == "waiting_for_acceptance" and len(r1["report"]["pendingGoals"]) >= 5
    a1 = t1["agentMessages"][0]
    assert r1["report"]["pendingMessageId"] == a1["id"]

    edit = await wire.client.patch(f"/v1/conversations/{conv['id']}/messages/{a1['id']}",
                                   json={"content": A1_EDITED}, headers=ALICE)
    assert edit.status_code == 200, edit.text

    t2 = await _say(wire, conv["id"], U2)
    s2 = _story(t2, lia["id"])
    assert "pov_advance_world:committed" in s2["toolCalls"] and s2["revision"] == 2
    r2 = await _report(wire, conv["id"], lia["id"])
    assert r2["revision"] == 2 and r2["report"]["acceptedMessageId"] == a1["id"]  # the edited reply was adopted

    t3 = await _say(wire, conv["id"], U3)
    s3 = _story(t3, lia["id"])
    assert s3["revision"] == 3 and (await _report(wire, conv["id"], lia["id"]))["revision"] == 3

    calls = [*s1["toolCalls"], *s2["toolCalls"], *s3["toolCalls"]]
    revision = 3
    for _ in range(MAX_EXTRA_TURNS):
        if "narrative_settle_event:settled" in calls:
            break
        story = _story(await _say(wire, conv["id"], MORE), lia["id"])
        revision += 1
        assert story["revision"] == revision
        calls += story["toolCalls"]
    assert "narrative_settle_event:settled" in calls, calls  # the settlement path ran on the simulator's answers

    final = await _report(wire, conv["id"], lia["id"])
    assert final["status"] == "waiting_for_acceptance" and final["revision"] == revision and final["failureCount"] == 0
