"""GET /v1/conversations/{id}/events over HTTP, and the ids on the POST …/turns stream."""

from __future__ import annotations

import pytest

from tests.integration.conftest import ALICE, BOB, Api
from tests.integration.events.sse import parse
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import World
from tests.integration.turns.test_turn_pipeline import select

SSE = {"accept": "text/event-stream"}


async def _sse_turn(api: Api, conv_id: str) -> list[dict]:
    resp = await api.client.post(f"/v1/conversations/{conv_id}/turns", json={"content": "我今天好难过"},
                                 headers={**ALICE, **SSE})  # fmt: skip
    assert resp.status_code == 201, resp.text
    return parse(resp.text)


async def test_every_logged_event_of_the_turn_stream_carries_an_increasing_id(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    events = await _sse_turn(turn_api, conv["id"])
    names = [e["event"] for e in events]
    assert names[0] == "turn.started" and "turn.completed" in names and "message.created" in names
    ids = [e["id"] for e in events if e["event"] != "message.delta"]  # live deltas have none: they are coalesced
    assert len(ids) == len([n for n in names if n != "message.delta"]) and ids == sorted(set(ids))


async def test_a_client_that_missed_events_gets_them_replayed_after_its_id(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    events = await _sse_turn(turn_api, conv["id"])
    turn_id = events[0]["data"]["turnId"]
    resp = await turn_api.client.get(f"/v1/conversations/{conv['id']}/events",
                                     params={"after": events[0]["id"], "turnId": turn_id}, headers={**ALICE, **SSE})  # fmt: skip
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
    replayed = parse(resp.text)
    assert _durable(replayed) == _durable(events)[1:]  # same ids, names, data
    names = [e["event"] for e in replayed]
    # a turnId stream ends with its turn's last event, after the late parts (issue 33: suggestions
    # never reached a follower that used ?turnId=)
    assert names[-1] == "turn.closed" and names.index("turn.completed") < names.index("suggestions.ready")
    assert next(e for e in replayed if e["event"] == "turn.completed")["data"]["more"] is True
    # deltas may come coalesced, and live ones may pass a durable event being written (placed by
    # offset, so one seen twice after a resume writes the same text): the text is the same
    assert _text(replayed) == _text(events[1:])


def _durable(events: list[dict]) -> list[dict]:
    return [e for e in events if e["event"] != "message.delta"]


def _text(events: list[dict]) -> dict[str, str]:
    out: dict[str, str] = {}
    for e in events:
        if e["event"] == "message.delta":
            out[e["data"]["draftId"]] = out.get(e["data"]["draftId"], "") + e["data"]["delta"]
    return out


async def test_last_event_id_wins_over_after(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    events = await _sse_turn(turn_api, conv["id"])
    durable = _durable(events)  # up to turn.closed, the turn's last event
    resp = await turn_api.client.get(
        f"/v1/conversations/{conv['id']}/events", params={"after": 0, "turnId": events[0]["data"]["turnId"]},
        headers={**ALICE, **SSE, "Last-Event-ID": str(durable[-2]["id"])},
    )
    assert parse(resp.text) == durable[-1:]


async def test_a_json_turn_is_logged_too(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    body = (await post_turn(turn_api, conv["id"], "我今天好难过")).json()
    resp = await turn_api.client.get(f"/v1/conversations/{conv['id']}/events",
                                     params={"after": 0, "turnId": body["turnId"]}, headers=ALICE)  # fmt: skip
    events = parse(resp.text)
    names = [e["event"] for e in _durable(events)]
    assert names[:3] == ["turn.started", "turn.emotion", "turn.selection"] and names[-2:] == ["suggestions.ready", "turn.closed"]
    created = [e["data"]["message"]["id"] for e in events if e["event"] == "message.created"]
    assert created == [m["id"] for m in body["agentMessages"]]


async def test_only_the_owner_can_follow_a_conversation(turn_api: Api) -> None:
    conv, _ = await make_group(turn_api)
    url = f"/v1/conversations/{conv['id']}/events"
    other = await turn_api.client.get(url, params={"after": 0}, headers=BOB)
    missing = await turn_api.client.get("/v1/conversations/nope/events", params={"after": 0}, headers=ALICE)
    assert other.status_code == missing.status_code == 404
    assert other.json()["code"] == missing.json()["code"] == "conversation_not_found"
    assert (await turn_api.client.get(url)).status_code == 401


@pytest.mark.parametrize("raw", ["abc", "+3", "1_000", " 3", "3 ", "-1", "03", "\u0663", "9223372036854775807", "1e3"])
async def test_a_last_event_id_the_server_never_sent_is_a_400(turn_api: Api, raw: str) -> None:
    conv, _ = await make_group(turn_api)
    resp = await turn_api.client.get(f"/v1/conversations/{conv['id']}/events",
                                     headers={**ALICE, "Last-Event-ID": raw.encode("utf-8")})  # fmt: skip
    assert resp.status_code == 400, (raw, resp.text)
    assert resp.json()["code"] == "invalid_last_event_id"


async def test_an_after_past_the_newest_event_is_a_400_and_zero_replays_from_the_start(turn_api: Api) -> None:
    conv, _ = await make_group(turn_api)
    url = f"/v1/conversations/{conv['id']}/events"
    resp = await turn_api.client.get(url, params={"after": 10**12}, headers=ALICE)
    assert resp.status_code == 400 and resp.json()["code"] == "invalid_last_event_id"
    assert resp.json()["details"]["latestEventId"] >= 0


async def test_a_streamed_turn_replayed_by_its_key_streams_again(turn_api: Api, world: World) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = select(gentle["id"])
    url = f"/v1/conversations/{conv['id']}/turns"
    body = {"content": "我今天好难过", "idempotencyKey": "sse-replay"}
    first = await turn_api.client.post(url, json=body, headers={**ALICE, **SSE})
    again = await turn_api.client.post(url, json=body, headers={**ALICE, **SSE})
    assert again.status_code == 200 and again.headers["content-type"].startswith("text/event-stream"), again.text
    assert _durable(parse(again.text)) == _durable(parse(first.text))  # the same logged events, same ids
    as_json = await turn_api.client.post(url, json=body, headers=ALICE)
    assert as_json.status_code == 200 and as_json.json()["turnId"] == parse(first.text)[0]["data"]["turnId"]
