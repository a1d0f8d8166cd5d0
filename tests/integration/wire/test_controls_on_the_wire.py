"""The message controls (issue 27) against the simulator over loopback with the real ``openai``
client, on both databases: regenerate adds versions a swipe switches, a rewind hides later turns
and the next turn is answered, and Stop ends a turn whose reply is still streaming."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import ALICE, Api, hosted, live_replicas, make_settings
from tests.integration.turns.test_cancel import _running_turn_id

SIMULATOR_SEED = 13


async def _direct(api: Api) -> dict[str, Any]:
    agent = await api.agent("林溪", capabilities={"comfort": 0.9})
    resp = await api.client.post("/v1/conversations", json={"kind": "direct", "agentIds": [agent["id"]]}, headers=ALICE)
    assert resp.status_code == 201, resp.text
    return resp.json()


async def _turn(api: Api, conv_id: str, text: str) -> dict[str, Any]:
    resp = await api.client.post(f"/v1/conversations/{conv_id}/turns", json={"content": text}, headers=ALICE)
    assert resp.status_code == 201, resp.text
    assert resp.json()["status"] == "completed", resp.json().get("error")
    return resp.json()


async def test_regenerate_keeps_versions_a_swipe_switches_and_a_rewind_goes_back(sim_api: Api) -> None:
    conv = await _direct(sim_api)
    first = await _turn(sim_api, conv["id"], "今晚睡不着，有点焦虑")
    msg = first["agentMessages"][0]
    url = f"/v1/conversations/{conv['id']}/messages/{msg['id']}"
    for expected in (2, 3):
        again = await sim_api.client.post(f"{url}/regenerate", headers=ALICE)
        assert again.status_code == 200, again.text
        assert again.json()["selectedVersion"] == expected
    listed = (await sim_api.client.get(f"{url}/versions", headers=ALICE)).json()
    texts = [v["content"] for v in listed["items"]]
    assert len(texts) == 3 and len(set(texts)) == 3 and all(v["model"] == "sim" for v in listed["items"]), texts
    back = await sim_api.client.put(f"{url}/selected", json={"version": 1}, headers=ALICE)
    assert back.status_code == 200 and back.json()["content"] == texts[0]

    await _turn(sim_api, conv["id"], "我明天还要早起")
    rewound = await sim_api.client.post(f"/v1/conversations/{conv['id']}/rewind", json={"toMessageId": msg["id"]},
                                        headers=ALICE)  # fmt: skip
    assert rewound.status_code == 200 and rewound.json()["removedMessages"] == 2, rewound.text
    nxt = await _turn(sim_api, conv["id"], "谢谢你陪我聊天")
    assert nxt["agentMessages"] and nxt["agentMessages"][0]["metadata"]["model"] == "sim"
    page = (await sim_api.client.get(f"/v1/conversations/{conv['id']}/messages?order=asc", headers=ALICE)).json()
    assert [m["content"] for m in page["items"]][:2] == ["今晚睡不着，有点焦虑", texts[0]]
    assert "我明天还要早起" not in [m["content"] for m in page["items"]]


@pytest.fixture
async def sim_live(db_url: str, tmp_path: Path, sim) -> AsyncIterator[Api]:
    """One app on the test's loop (a turn and its Stop run concurrently), the simulator as model."""
    from app.llm.fakes import block_network_models

    settings = make_settings(db_url, tmp_path, COMPANION_LLM_BASE_URL=sim.base_url, COMPANION_LLM_MODEL="sim",
                             COMPANION_LLM_TIMEOUT_MS="15000")  # fmt: skip
    with block_network_models():
        async for apps in hosted(live_replicas(settings, None, n=1)):
            yield apps[0]


async def test_stop_ends_a_turn_whose_reply_is_streaming(sim_live: Api, sim, engine) -> None:
    conv = await _direct(sim_live)
    sim.configure(ttft_ms=300, tokens_per_s=4.0)  # the reply streams for many seconds
    posted = asyncio.create_task(sim_live.client.post(
        f"/v1/conversations/{conv['id']}/turns", json={"content": "今晚睡不着，有点焦虑"}, headers=ALICE))  # fmt: skip
    turn_id = await _running_turn_id(engine, conv["id"])
    await asyncio.sleep(1.5)
    stop = await sim_live.client.post(f"/v1/conversations/{conv['id']}/turns/{turn_id}/cancel", headers=ALICE)
    assert stop.status_code == 202, stop.text
    result = (await asyncio.wait_for(posted, 5)).json()
    assert result["status"] == "cancelled" and result["agentMessages"] == [], result
    sim.configure(ttft_ms=None, tokens_per_s=0.0)
    page = (await sim_live.client.get(f"/v1/conversations/{conv['id']}/messages", headers=ALICE)).json()
    assert [m["role"] for m in page["items"]] == ["user"]
    assert (await _turn(sim_live, conv["id"], "还在吗？"))["agentMessages"]


async def test_write_for_me_streams_one_line_from_the_model(sim_api: Api, sim) -> None:
    from tests.integration.events.sse import parse

    conv = await _direct(sim_api)
    await _turn(sim_api, conv["id"], "今晚睡不着，有点焦虑")
    sim.configure(ttft_ms=100, tokens_per_s=200.0)  # streamed in token-sized pieces
    resp = await sim_api.client.post(f"/v1/conversations/{conv['id']}/impersonate", json={"draft": "我想"},
                                     headers={**ALICE, "accept": "text/event-stream"})  # fmt: skip
    sim.configure(ttft_ms=None, tokens_per_s=0.0)
    assert resp.status_code == 200, resp.text
    events = parse(resp.text)
    done = events[-1]
    assert done["event"] == "impersonate.done", events[-3:]
    deltas = [e for e in events if e["event"] == "impersonate.delta"]
    assert len(deltas) > 3  # it arrives as it is written
    assert done["data"]["text"].startswith("我想") and done["data"]["model"] == "sim"
    assert done["data"]["text"] == "我想" + "".join(e["data"]["text"] for e in deltas if e["data"]["attempt"] == len(done["data"]["attempts"]))
    page = (await sim_api.client.get(f"/v1/conversations/{conv['id']}/messages", headers=ALICE)).json()
    assert len(page["items"]) == 2  # never stored
