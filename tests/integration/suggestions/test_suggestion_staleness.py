"""Chips are current only while their anchor is: an edited, regenerated or deleted anchor, or
``autoReply.enabled`` turned off, leaves no ready chips, and a running generation is cancelled."""

from __future__ import annotations

from tests.integration.conftest import ALICE, Api
from tests.integration.suggestions.conftest import AutoReplyScript, in_thread, suggest_url, suggestion_rows, until
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import select


async def _ready(api: Api, world) -> tuple[dict, str]:
    conv, (gentle, _, _) = await make_group(api)
    world.handlers["select"] = select(gentle["id"])
    turn = (await post_turn(api, conv["id"], "我今天好难过")).json()
    assert turn["suggestions"]["status"] == "ready", turn["suggestions"]
    return conv, turn["agentMessages"][0]["id"]


async def _latest(api: Api, conv_id: str) -> dict:
    resp = await api.client.get(f"/v1/conversations/{conv_id}/suggestions/latest", headers=ALICE)
    assert resp.status_code == 200, resp.text
    return resp.json()


async def test_editing_the_anchor_clears_its_ready_chips(sapi: Api, world) -> None:
    conv, anchor = await _ready(sapi, world)
    edit = await sapi.client.patch(f"/v1/conversations/{conv['id']}/messages/{anchor}", json={"content": "改过的回复。"},
                                   headers=ALICE)  # fmt: skip
    assert edit.status_code == 200, edit.text
    latest = await _latest(sapi, conv["id"])
    assert latest["anchorMessageId"] == anchor and latest["status"] == "cleared" and latest["options"] == []
    # new chips for the edited anchor are current again
    assert (await sapi.client.post(suggest_url(conv["id"], anchor), headers=ALICE)).status_code == 201
    assert (await _latest(sapi, conv["id"]))["status"] == "ready"


async def test_regenerating_the_anchor_clears_its_ready_chips(sapi: Api, world) -> None:
    conv, anchor = await _ready(sapi, world)
    world.handlers["actor"] = ["换一种说法：我一直在这里陪着你。"]
    resp = await sapi.client.post(f"/v1/conversations/{conv['id']}/messages/{anchor}/regenerate", headers=ALICE)
    assert resp.status_code == 200, resp.text
    latest = await _latest(sapi, conv["id"])
    assert latest["anchorMessageId"] == anchor and latest["status"] == "cleared" and latest["options"] == []


async def test_deleting_the_anchor_clears_its_ready_chips(sapi: Api, world) -> None:
    conv, anchor = await _ready(sapi, world)
    resp = await sapi.client.delete(f"/v1/conversations/{conv['id']}/messages/{anchor}", headers=ALICE)
    assert resp.status_code == 204, resp.text
    assert (await _latest(sapi, conv["id"]))["status"] == "cleared"


async def test_turning_auto_reply_off_clears_ready_chips(sapi: Api, world) -> None:
    conv, _ = await _ready(sapi, world)
    off = await sapi.client.patch(f"/v1/conversations/{conv['id']}", json={"settings": {"autoReply": {"enabled": False}}},
                                  headers=ALICE)  # fmt: skip
    assert off.status_code == 200, off.text
    latest = await _latest(sapi, conv["id"])
    assert latest["status"] == "cleared" and latest["options"] == []


async def test_turning_auto_reply_off_cancels_a_running_generation(sapi: Api, world, script: AutoReplyScript,
                                                                   engine) -> None:
    conv, anchor = await _ready(sapi, world)
    script.block = 1
    pending = in_thread(sapi.client.post(suggest_url(conv["id"], anchor), headers=ALICE))
    await until(lambda: script.started == 1)
    off = await sapi.client.patch(f"/v1/conversations/{conv['id']}", json={"settings": {"autoReply": {"enabled": False}}},
                                  headers=ALICE)  # fmt: skip
    assert off.status_code == 200
    await until(lambda: script.cancelled == 1)  # the model call itself is stopped, not only its result
    resp = await pending
    assert resp.status_code == 409 and resp.json()["code"] == "suggestions_stale"
    assert (await suggestion_rows(engine, conv["id"]))[-1].status == "cleared"
    assert (await _latest(sapi, conv["id"]))["status"] == "cleared"


async def test_editing_the_anchor_cancels_a_running_generation_for_it(sapi: Api, world, script: AutoReplyScript,
                                                                      engine) -> None:
    conv, anchor = await _ready(sapi, world)
    script.block = 1
    pending = in_thread(sapi.client.post(suggest_url(conv["id"], anchor), headers=ALICE))
    await until(lambda: script.started == 1)
    edit = await sapi.client.patch(f"/v1/conversations/{conv['id']}/messages/{anchor}", json={"content": "改过的回复。"},
                                   headers=ALICE)  # fmt: skip
    assert edit.status_code == 200
    await until(lambda: script.cancelled == 1)
    assert (await pending).status_code == 409
    assert (await _latest(sapi, conv["id"]))["status"] == "cleared"
