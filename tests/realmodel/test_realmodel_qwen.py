"""Behaviour on a real Chinese-capable model (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M, on
``llama-server``): what is saved is something a user would keep. A Chinese group turn in the
four-member group, and a suggestions call after it; the reply checks (echo of the user, repeat of
the window, the prompt's own wording, a line for someone else) are run again on the saved text
and must find nothing."""

from __future__ import annotations

from typing import Any

from story.auto_reply.validate import near_duplicate_problems
from tests.integration.conftest import ALICE, Api
from tests.realmodel.group import (
    OWN_SUGGESTIONS_OFF, ROLES, agent_body, persona_text, saved_reply_problems, suggestions_on,
)

ZH = "zh-CN"
# The issue's own cases: a line a weak model echoed, and a sad one (two turns of up to two replies
# each: a third turn cost CI about a minute a database, and the interview line is write-for-me's).
TEXTS = ("我今天看到一个超好笑的视频，笑死我了", "我今天有点难过，不知道该怎么办。")


async def _group(api: Api) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    agents = [await api.agent(**agent_body(ZH, role)) for role in ROLES]
    conv = await api.group(*(a["id"] for a in agents), settings={"language": ZH, "replyLimit": 2, **OWN_SUGGESTIONS_OFF})
    personas = {a["id"]: persona_text(ZH, role) for a, role in zip(agents, ROLES, strict=True)}
    return conv, {a["id"]: a["name"] for a in agents}, personas


async def _messages(api: Api, conv_id: str) -> list[dict[str, Any]]:
    resp = await api.client.get(f"/v1/conversations/{conv_id}/messages", params={"order": "asc", "limit": 200},
                                headers=ALICE)  # fmt: skip
    assert resp.status_code == 200, resp.text
    return resp.json()["items"]


async def test_zh_group_turn_saves_only_replies_a_user_would_keep(qwen_api: Api):
    conv, names, personas = await _group(qwen_api)
    kept = []
    for text in TEXTS:
        resp = await qwen_api.client.post(f"/v1/conversations/{conv['id']}/turns", json={"content": text},
                                          headers=ALICE)  # fmt: skip
        assert resp.status_code in (200, 201), resp.text
        turn = resp.json()
        kept += turn["agentMessages"]
        print(text, "→", [(names[m["agentId"]], m["content"]) for m in turn["agentMessages"]],
              (turn.get("error") or {}).get("details"))  # fmt: skip
    assert kept, "no turn kept a reply"
    messages = await _messages(qwen_api, conv["id"])
    assert saved_reply_problems(messages, names, ZH, personas) == {}
    for m in kept:
        assert any("\u4e00" <= ch <= "\u9fff" for ch in m["content"]), m["content"]

    anchor = kept[-1]["id"]
    await suggestions_on(qwen_api, conv["id"])
    resp = await qwen_api.client.post(f"/v1/conversations/{conv['id']}/messages/{anchor}/suggestions", json={},
                                      headers=ALICE)  # fmt: skip
    body = resp.json()
    print("suggestions:", body)
    if resp.status_code == 201:  # ready: three options of their own, none a near-copy of another
        assert body["fallback"] is False and len(body["options"]) == 3, body
        assert near_duplicate_problems(body["options"]) == [], body["options"]
    else:  # a 0.5B model often writes the same option three times: failed honestly, never canned text
        assert resp.status_code == 502 and body["code"] == "auto_reply_generation_failed", body
        problems = [p for attempt in body["details"]["problems"] for p in attempt]
        assert problems and "options" not in body, body


async def test_write_for_me_gives_a_line_in_the_users_voice_in_chinese_and_english(qwen_api: Api):
    """One real turn per language, then write-for-me with and without a typed draft: the line is
    in the chat's language, starts with the draft, copies nobody, and is never saved. The calls'
    timeout is the README's advice for CPU users (at 15 s one timed out in CI). The turns' own
    suggestions are off: they would share the server's two cores with the first write-for-me."""
    from story.auto_reply import AutoReplyConfig, ContextMessage
    from story.auto_reply.impersonate import ImpersonateInput, check_line

    usable = 0
    for language, text, draft in (("zh-CN", "明天要面试了，我好紧张，睡不着。", "其实我"),
                                  ("en", "I have a job interview tomorrow and I can't sleep.", "Honestly")):  # fmt: skip
        agent = await qwen_api.agent(**agent_body(language, ROLES[0]))
        created = await qwen_api.client.post("/v1/conversations", json={"kind": "direct", "agentIds": [agent["id"]],
                                             "settings": {"language": language, **OWN_SUGGESTIONS_OFF}},
                                             headers=ALICE)  # fmt: skip
        conv = created.json()
        turn = (await qwen_api.client.post(f"/v1/conversations/{conv['id']}/turns", json={"content": text},
                                           headers=ALICE)).json()  # fmt: skip
        print(language, "reply:", [m["content"] for m in turn["agentMessages"]])
        await suggestions_on(qwen_api, conv["id"], timeoutMs=30000)
        before = await _messages(qwen_api, conv["id"])
        context = [ContextMessage("User" if m["role"] == "user" else agent["name"], m["role"], m["content"]) for m in before]
        kept = 0
        for typed in ("", draft):
            resp = await qwen_api.client.post(f"/v1/conversations/{conv['id']}/impersonate", json={"draft": typed},
                                              headers=ALICE)  # fmt: skip
            body = resp.json()
            print(language, repr(typed), "→", resp.status_code, body.get("text"), body.get("attempts") or body.get("details"))
            if resp.status_code == 200:
                kept += 1
                assert body["text"].startswith(typed), body
                inp = ImpersonateInput(language=language, members=[agent["name"]], context=context, draft=typed)
                assert check_line(body["text"], inp, AutoReplyConfig())[1] == [], body["text"]
            else:  # no usable line: said honestly, with every attempt's problems
                assert resp.status_code == 502 and body["code"] == "impersonate_failed", body
                assert len(body["details"]["attempts"]) == 3
        usable += kept
        assert len(await _messages(qwen_api, conv["id"])) == len(before)  # never saved
    # a 0.5B model misses often (the companion's words given back, too long): the checks refuse
    # those honestly; the feature works when some request gives a line the checks accept
    assert usable, "no usable line in four requests"
