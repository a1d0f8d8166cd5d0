"""Lore on the wire (issue 28): an entry whose key is in the window is in the actor request the
simulator receives (the system message, under its title) and in the reply's metadata; without
the key, neither."""

from __future__ import annotations

from tests.integration.conftest import ADMIN, ALICE, Api
from tests.integration.turns.conftest import post_turn

CONTENT = "雪城终年积雪，城墙是冰做的。"
OWN = "莉娅小时候住在雪城。"


def actor_systems(sim, marker: str) -> list[str]:
    """The system messages of the chat requests the simulator received that speak as ``marker``."""
    systems = [body["messages"][0]["content"] for body in sim.received() if body["messages"][0]["role"] == "system"]
    return [s for s in systems if marker in s]


async def test_a_triggered_entry_is_in_the_actor_request_the_simulator_receives(sim_api: Api, sim) -> None:
    api = sim_api
    agent = await api.agent("莉娅", headline="温柔的倾听者")
    conv = (await api.client.post("/v1/conversations", json={"kind": "direct", "agentIds": [agent["id"]]},
                                  headers=ALICE)).json()  # fmt: skip
    made = await api.client.post(f"/v1/conversations/{conv['id']}/lore",
                                 json={"keys": ["雪城"], "content": CONTENT, "priority": 3}, headers=ALICE)  # fmt: skip
    own = await api.client.post(f"/v1/agents/{agent['id']}/lore", json={"keys": ["雪城"], "content": OWN}, headers=ADMIN)
    assert made.status_code == 201 and own.status_code == 201, (made.text, own.text)

    before = len(actor_systems(sim, "莉娅"))
    turn = (await post_turn(api, conv["id"], "我今天上班好累。")).json()
    assert turn["status"] == "completed", turn
    assert turn["agentMessages"][0]["metadata"]["lore"] == []
    sent = actor_systems(sim, "莉娅")[before:]
    assert sent and not any(CONTENT in s for s in sent)

    turn = (await post_turn(api, conv["id"], "周末想去雪城玩。")).json()
    assert turn["status"] == "completed", turn
    assert turn["agentMessages"][0]["metadata"]["lore"] == [
        {"id": made.json()["id"], "keys": ["雪城"], "priority": 3}, {"id": own.json()["id"], "keys": ["雪城"], "priority": 0}]
    sent = [s for s in actor_systems(sim, "莉娅") if CONTENT in s]
    assert sent, "the simulator never received the entry"
    block = sent[-1].split("设定", 1)[1]
    assert block.index(CONTENT) < block.index(OWN)  # under the title, highest priority first
