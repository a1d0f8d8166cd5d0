"""POST /messages/{id}/suggestions: anchoring, formats and every error code."""

from __future__ import annotations

from app.db.engine import session_factory
from app.db.models import Suggestion
from tests.integration.conftest import ALICE, BOB, Api
from tests.integration.suggestions.conftest import EN_OPTIONS, ZH_OPTIONS, AutoReplyScript, seed, suggest_url, suggestion_rows
from tests.integration.turns.conftest import make_group


async def test_suggestions_answer_the_saved_edited_anchor_and_never_see_later_messages(sapi: Api, script: AutoReplyScript, engine) -> None:
    conv, (gentle, planner, _) = await make_group(sapi, autoReply={"contextMessageCount": 2})
    ids = await seed(engine, conv["id"], (None, "最早的一句话"), (gentle["id"], "最早的回复"), (None, "我今天好累"),
                     (planner["id"], "要不要休息一下？"), (None, "之后才说的话"), (gentle["id"], "之后的回复"))  # fmt: skip
    anchor = ids[3]
    edit = await sapi.client.patch(f"/v1/conversations/{conv['id']}/messages/{anchor}", json={"content": "先喝杯热水，好吗？"}, headers=ALICE)
    assert edit.status_code == 200, edit.text
    resp = await sapi.client.post(suggest_url(conv["id"], anchor), headers=ALICE)
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert body["anchorMessageId"] == anchor and body["options"] == ZH_OPTIONS and body["fallback"] is False
    assert body["suggestionId"] and body["usage"]["totalTokens"] > 0
    prompt = script.prompt()
    assert "先喝杯热水，好吗？" in prompt and "要不要休息一下？" not in prompt  # the saved edit, not the old text
    assert "之后才说的话" not in prompt and "之后的回复" not in prompt  # nothing after the anchor
    context = prompt.split("## Recent conversation (oldest first)\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert context == ["[莉娅 (character)]: 最早的回复", "[User (user)]: 我今天好累"]  # at most contextMessageCount
    assert "最早的一句话" not in prompt
    assert script.requests[0].purpose == "auto_reply" and script.requests[0].max_tokens == 384
    schema = script.requests[0].response_schema.schema  # the one wire-schema path, with the conversation's bounds
    assert schema["required"] == ["options"] and schema["additionalProperties"] is False
    options = schema["properties"]["options"]
    assert (options["minItems"], options["maxItems"], options["items"]["maxLength"]) == (3, 3, 160)


async def test_numbered_format_is_plain_text(sapi: Api, engine) -> None:
    conv, (gentle, _, _) = await make_group(sapi)
    _, anchor = await seed(engine, conv["id"], (None, "你好"), (gentle["id"], "你好呀，今天怎么样？"))
    resp = await sapi.client.post(suggest_url(conv["id"], anchor) + "?format=numbered", headers=ALICE)
    assert resp.status_code == 201, resp.text
    assert resp.headers["content-type"].startswith("text/plain")
    assert resp.text == "\n".join(f"{i}: {o}" for i, o in enumerate(ZH_OPTIONS, 1))


async def test_anchor_errors_have_their_codes(sapi: Api, script: AutoReplyScript, engine) -> None:
    conv, (gentle, _, _) = await make_group(sapi)
    lonely, user_msg, anchor, gone = await seed(engine, conv["id"], (gentle["id"], "有人吗？"), (None, "我在"),
                                                (gentle["id"], "太好了"), (gentle["id"], "这句会被删掉"))  # fmt: skip
    assert (await sapi.client.delete(f"/v1/conversations/{conv['id']}/messages/{gone}", headers=ALICE)).status_code == 204

    async def code(message_id: str, headers=ALICE) -> tuple[int, str]:
        resp = await sapi.client.post(suggest_url(conv["id"], message_id), headers=headers)
        return resp.status_code, resp.json()["code"]

    assert await code("no-such-message") == (404, "message_not_found")
    assert await code(gone) == (404, "message_not_found")
    assert await code(user_msg) == (422, "anchor_not_agent_message")
    assert await code(lonely) == (422, "anchor_without_user_turn")
    assert await code(anchor, BOB) == (404, "conversation_not_found")
    assert script.requests == [] and await suggestion_rows(engine, conv["id"]) == []


async def test_no_model_configured_is_503(sapi: Api, world, script: AutoReplyScript, engine) -> None:
    conv, (gentle, _, _) = await make_group(sapi)
    _, anchor = await seed(engine, conv["id"], (None, "你好"), (gentle["id"], "你好呀"))
    world.model.is_configured = lambda stage: stage != "auto_reply"
    resp = await sapi.client.post(suggest_url(conv["id"], anchor), headers=ALICE)
    assert resp.status_code == 503 and resp.json()["code"] == "model_not_configured"
    assert script.requests == []


async def test_three_invalid_answers_are_502_with_each_attempts_problems(sapi: Api, script: AutoReplyScript, engine) -> None:
    conv, (gentle, _, _) = await make_group(sapi)
    _, anchor = await seed(engine, conv["id"], (None, "你好"), (gentle["id"], "你好呀"))
    script.answers = [{"options": EN_OPTIONS}, "Hello there"]  # the list, then every line: no Chinese
    resp = await sapi.client.post(suggest_url(conv["id"], anchor), headers=ALICE)
    assert resp.status_code == 502, resp.text
    body = resp.json()
    assert body["code"] == "auto_reply_generation_failed" and "options" not in body
    problems = body["details"]["problems"]
    assert len(problems) == 3 and body["details"]["attempts"] == 3
    assert all(any("script" in p for p in attempt) for attempt in problems)
    assert len(script.requests) == 1 + 3 + 6  # the list, a line per option, then those and the three spare directions
    [row] = await suggestion_rows(engine, conv["id"])
    assert row.status == "failed" and row.options == [] and row.problems == problems and row.attempts == 3


async def test_a_list_with_a_duplicate_is_completed_by_a_line(sapi: Api, script: AutoReplyScript, engine) -> None:
    conv, (gentle, _, _) = await make_group(sapi)
    _, anchor = await seed(engine, conv["id"], (None, "你好"), (gentle["id"], "你好呀"))
    script.answers = [{"options": ["1. 好的", "好的！", "还有别的吗"]}, "我们换个话题吧，最近在看什么书？"]
    resp = await sapi.client.post(suggest_url(conv["id"], anchor), headers=ALICE)
    assert resp.status_code == 201 and resp.json()["options"] == ["好的", "还有别的吗", "我们换个话题吧，最近在看什么书？"]
    line = script.requests[1]
    assert line.response_schema is None and line.messages[-1].content.endswith("（这次说点别的，换个话题）")
    [row] = await suggestion_rows(engine, conv["id"])
    assert row.status == "ready" and row.attempts == 2 and row.problems[0] and row.problems[1] == []


async def test_conservative_fallback_only_when_configured_and_flagged(sapi: Api, script: AutoReplyScript, engine) -> None:
    conv, (gentle, _, _) = await make_group(sapi, autoReply={"fallback": "conservative"})
    _, anchor = await seed(engine, conv["id"], (None, "你好"), (gentle["id"], "你想去哪里？"))
    script.answers = [{"options": EN_OPTIONS}]
    resp = await sapi.client.post(suggest_url(conv["id"], anchor), headers=ALICE)
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert body["fallback"] is True and len(body["options"]) == 3
    assert len(script.requests) == 1 + 3 + 6  # the list, three lines, then those and three spares (all in English)
    async with session_factory(engine)() as s:
        row = await s.get(Suggestion, body["suggestionId"])
    assert row.status == "ready" and row.fallback is True


async def test_disabled_auto_reply_makes_no_model_call(sapi: Api, script: AutoReplyScript, engine) -> None:
    conv, (gentle, _, _) = await make_group(sapi, autoReply={"enabled": False})
    _, anchor = await seed(engine, conv["id"], (None, "你好"), (gentle["id"], "你好呀"))
    resp = await sapi.client.post(suggest_url(conv["id"], anchor), headers=ALICE)
    assert resp.status_code == 409 and resp.json()["code"] == "auto_reply_disabled"
    assert script.requests == [] and await suggestion_rows(engine, conv["id"]) == []


async def test_latest_is_404_before_any_and_for_other_users(sapi: Api, engine) -> None:
    conv, (gentle, _, _) = await make_group(sapi)
    url = f"/v1/conversations/{conv['id']}/suggestions/latest"
    assert (await sapi.client.get(url, headers=ALICE)).json()["code"] == "suggestions_not_found"
    _, anchor = await seed(engine, conv["id"], (None, "你好"), (gentle["id"], "你好呀"))
    created = (await sapi.client.post(suggest_url(conv["id"], anchor), headers=ALICE)).json()
    latest = (await sapi.client.get(url, headers=ALICE)).json()
    assert latest["suggestionId"] == created["suggestionId"] and latest["status"] == "ready"
    assert latest["options"] == ZH_OPTIONS and latest["anchorMessageId"] == anchor
    assert (await sapi.client.get(url, headers=BOB)).status_code == 404
