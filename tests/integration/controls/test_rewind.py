"""Rewind a conversation to a message (issue 27): later messages become a hidden branch, the
Story goes back to its state at that message, suggestions are cleared, the turn lock holds."""

from __future__ import annotations

import re
from typing import Any

import msgspec
from sqlalchemy import select

from app.db.engine import session_factory
from app.db.models import Message, StoryQuarantine, Suggestion
from app.turns import repository
from tests.integration.conftest import ADMIN, ALICE, BOB
from tests.integration.controls.conftest import controls, logged_events
from tests.integration.story.conftest import saved_state, say, state_row, story_group
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import select as choose


async def _rewind(api, conv_id: str, to: Any, user=ALICE):
    body = {"toMessageId": to} if to is not None else {}
    return await api.client.post(f"/v1/conversations/{conv_id}/rewind", json=body, headers=user)


async def _visible(api, conv_id: str) -> list[str]:
    page = (await api.client.get(f"/v1/conversations/{conv_id}/messages?order=asc", headers=ALICE)).json()
    return [m["content"] for m in page["items"]]


async def test_rewind_hides_everything_after_the_message_and_keeps_it(turn_api, world, engine) -> None:
    conv, (gentle, _, _) = await make_group(turn_api, selection={"mode": "llm"})  # the model picks
    world.handlers["select"] = choose(gentle["id"])
    first = None
    for line, reply in [("你好", "第一句回复。"), ("今天下雨了", "第二句回复。"), ("我想出去走走", "第三句回复。")]:
        world.handlers["actor"] = lambda req, reply=reply: reply
        done = (await post_turn(turn_api, conv["id"], line)).json()
        assert done["status"] == "completed", done
        first = first or done
    to = first["agentMessages"][0]["id"]

    resp = await _rewind(turn_api, conv["id"], to)
    assert resp.status_code == 200, resp.text
    out = resp.json()
    assert out["toMessageId"] == to and out["removedMessages"] == 4 and out["removedByAgent"] == {gentle["id"]: 2}
    assert await _visible(turn_api, conv["id"]) == ["你好", "第一句回复。"]
    got = (await turn_api.client.get(f"/v1/conversations/{conv['id']}", headers=ALICE)).json()
    assert got["messageCount"] == 2

    async with session_factory(engine)() as s:  # kept, as a hidden branch an admin can read
        rows = (await s.scalars(select(Message).where(Message.conversation_id == conv["id"]).order_by(Message.seq))).all()
    hidden = [m for m in rows if m.hidden_at is not None]
    assert [m.content for m in hidden] == ["今天下雨了", "第二句回复。", "我想出去走走", "第三句回复。"]
    assert {m.hidden_by for m in hidden} == {out["rewindId"]} and [m.id for m in hidden] == out["removedMessageIds"]

    listed = (await turn_api.client.get(f"/v1/conversations/{conv['id']}/messages/hidden", headers=ALICE)).json()
    assert [m["id"] for m in listed["items"]] == out["removedMessageIds"][::-1]  # newest first
    assert {m["hiddenBy"] for m in listed["items"]} == {out["rewindId"]} and all(m["hiddenAt"] for m in listed["items"])
    admin = (await turn_api.client.get(f"/v1/conversations/{conv['id']}/messages/hidden?limit=1", headers=ADMIN)).json()
    assert len(admin["items"]) == 1 and admin["nextCursor"] is not None
    assert (await turn_api.client.get(f"/v1/conversations/{conv['id']}/messages/hidden", headers=BOB)).status_code == 404

    kinds = await controls(engine, conv["id"])
    assert kinds[-1][0] == "rewind" and kinds[-1][2]["removedByAgent"] == {gentle["id"]: 2}
    events = [d for e, d in await logged_events(engine, conv["id"]) if e == "conversation.rewound"]
    assert [e["removedMessageIds"] for e in events] == [out["removedMessageIds"]]

    world.handlers["actor"] = lambda req: "换个话题吧。"
    assert (await post_turn(turn_api, conv["id"], "我们聊点别的")).status_code == 201
    prompt = "\n".join(m.content for m in world.model.history[-1].messages)
    assert "第一句回复。" in prompt and "第二句回复。" not in prompt and "我想出去走走" not in prompt
    assert await _visible(turn_api, conv["id"]) == ["你好", "第一句回复。", "我们聊点别的", "换个话题吧。"]


async def test_rewind_to_the_last_message_removes_nothing_and_bad_requests_are_refused(turn_api, world) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = choose(gentle["id"])
    world.handlers["actor"] = lambda req: "我在。"
    last = (await post_turn(turn_api, conv["id"], "你好")).json()["agentMessages"][0]["id"]
    same = await _rewind(turn_api, conv["id"], last)
    assert same.status_code == 200 and same.json()["removedMessages"] == 0
    missing = await _rewind(turn_api, conv["id"], "nope")
    assert missing.status_code == 404 and missing.json()["code"] == "message_not_found"
    assert (await _rewind(turn_api, conv["id"], None)).status_code == 422
    assert (await _rewind(turn_api, conv["id"], last, user=BOB)).status_code == 404
    rewound = (await post_turn(turn_api, conv["id"], "再说一句")).json()["userMessage"]["id"]
    await _rewind(turn_api, conv["id"], last)
    gone = await _rewind(turn_api, conv["id"], rewound)  # a hidden message is not a place to rewind to
    assert gone.status_code == 404 and gone.json()["code"] == "message_not_found"


async def test_rewind_waits_for_no_one_it_refuses_while_a_turn_runs(turn_api, world, engine) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = choose(gentle["id"])
    world.handlers["actor"] = lambda req: "我在。"
    first = (await post_turn(turn_api, conv["id"], "你好")).json()["userMessage"]["id"]
    held = await repository.start_turn(session_factory(engine), ALICE_ID, conv["id"], None, None, stale_after_s=60)
    try:
        busy = await _rewind(turn_api, conv["id"], first)
        assert busy.status_code == 409 and busy.json()["code"] == "turn_in_progress"
        assert busy.json()["details"]["runningTurnId"] == held.turn.id
        assert len(await _visible(turn_api, conv["id"])) == 2
    finally:
        await repository.finish_turn(session_factory(engine), held.turn.id, status="completed", result=None, error=None,
                                     intent=None, emotion=None, timings={}, usage={})  # fmt: skip
    assert (await _rewind(turn_api, conv["id"], first)).json()["removedMessages"] == 1
    busy_turn = await post_turn(turn_api, conv["id"], "我回来了")  # the rewind released the lock
    assert busy_turn.status_code == 201


ALICE_ID = "alice"


async def test_rewind_clears_open_suggestions(turn_api, world, engine) -> None:
    conv, (gentle, _, _) = await make_group(turn_api)
    world.handlers["select"] = choose(gentle["id"])
    world.handlers["actor"] = lambda req: "我在。"
    first = (await post_turn(turn_api, conv["id"], "你好")).json()
    async with session_factory(engine)() as s:
        s.add(Suggestion(id="s" * 32, conversation_id=conv["id"], anchor_message_id=first["agentMessages"][0]["id"],
                         status="ready", options=["a", "b", "c"]))  # fmt: skip
        await s.commit()
    out = (await _rewind(turn_api, conv["id"], first["userMessage"]["id"])).json()
    assert out["suggestionsCleared"] >= 1  # the turn's own suggestions, if any, and this one
    async with session_factory(engine)() as s:
        assert (await s.get(Suggestion, "s" * 32)).status == "cleared"


# -- the Story ----------------------------------------------------------------------------------

HEX = re.compile(r"^[0-9a-f]{32}(:[0-9a-f]{32})?$")  # an id, or a turn:agent key


def _shape(value: Any) -> Any:
    """A state without what differs between two conversations by construction: ids, times, seqs."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()
                if k not in ("source_position", "seq", "at", "created_at", "updated_at") and not k.endswith("_at")}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    if isinstance(value, str) and (HEX.match(value) or re.match(r"^\d{4}-\d\d-\d\dT", value)):
        return "<id>"
    return value


def _diff(a, b, path=""):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in set(a) | set(b):
            yield from _diff(a.get(k), b.get(k), f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from _diff(x, y, f"{path}[{i}]")
    elif a != b:
        yield (path, a, b)


async def _story_script(api, world, conv_id: str, lines: list[tuple[str, str]]) -> list[dict[str, Any]]:
    out = []
    for user, reply in lines:
        world.handlers["actor"] = lambda req, reply=reply: reply
        out.append(await say(api, conv_id, user))
    return out


async def test_rewind_then_a_turn_gives_the_story_of_a_conversation_that_never_had_the_removed_turns(
        story_api, world, engine) -> None:  # fmt: skip
    kept = [("我把铜钥匙递给莉娅", "莉娅接过钥匙，仔细端详。")]
    removed = [("我们去档案馆吧", "莉娅点头，带你穿过城门。"), ("档案馆的门锁着", "莉娅试了试钥匙，门开了。")]
    after = [("我们先回城门口", "莉娅收好钥匙，和你一起往回走。")]

    rewound, (lia, _, _) = await story_group(story_api, world)
    turns = await _story_script(story_api, world, rewound["id"], kept + removed)
    before = await state_row(engine, rewound["id"], lia["id"])
    out = (await _rewind(story_api, rewound["id"], turns[0]["agentMessages"][0]["id"])).json()
    assert [(s["agentId"], s["action"]) for s in out["story"]] == [(lia["id"], "restored")], out
    report = (await story_api.client.get(f"/v1/conversations/{rewound['id']}/story/{lia['id']}",
                                         headers=ALICE)).json()  # fmt: skip
    assert report["lastOutcome"]["kind"] == "rewind" and report["lastOutcome"]["action"] == "restored", report
    await _story_script(story_api, world, rewound["id"], after)

    plain, (lia2, _, _) = await story_group(story_api, world)
    await _story_script(story_api, world, plain["id"], kept + after)

    one = msgspec.to_builtins(await saved_state(engine, rewound["id"], lia["id"]))
    two = msgspec.to_builtins(await saved_state(engine, plain["id"], lia2["id"]))
    a, b = _shape({**one, "agent_id": None}), _shape({**two, "agent_id": None})
    assert a == b, list(_diff(a, b))
    async with session_factory(engine)() as s:  # the state it had is kept for an admin
        archived = await s.get(StoryQuarantine, out["story"][0]["archivedId"])
    assert archived.status == "reset" and archived.record["previous_revision"] == before.revision


async def test_rewind_past_the_story_s_start_reinitialises_it_and_says_so(story_api, world, engine) -> None:
    conv, (lia, _, _) = await story_group(story_api, world, story={"enabled": False})
    first = (await say(story_api, conv["id"], "你好"))["userMessage"]["id"]
    patch = await story_api.client.patch(f"/v1/conversations/{conv['id']}", json={"settings": {
        "story": {"enabled": True, "modelConfigId": "default"}, "selection": {"mode": "llm"}}}, headers=ALICE)
    assert patch.status_code == 200, patch.text
    world.handlers["actor"] = lambda req: "莉娅接过钥匙。"
    await say(story_api, conv["id"], "我把铜钥匙递给莉娅")
    assert (await state_row(engine, conv["id"], lia["id"])).envelope is not None
    out = (await _rewind(story_api, conv["id"], first)).json()
    assert out["story"][0]["action"] == "reinitialised" and "not started" in out["story"][0]["reason"]
    row = await state_row(engine, conv["id"], lia["id"])
    assert row.envelope is None and row.status == "reset"
    await say(story_api, conv["id"], "我们重新开始吧")  # the next turn initialises from what is left
    assert (await state_row(engine, conv["id"], lia["id"])).envelope is not None
