"""Lore entries over HTTP (issue 28), on SQLite and PostgreSQL: create, list, update, delete; the
limits and their codes; a conversation's entries are its owner's, an agent's are written by admins."""

from __future__ import annotations

from typing import Any

import pytest

from app.main import create_app
from tests.integration.conftest import ADMIN, ALICE, BOB, Api, make_settings


async def _group(api: Api) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    a, b = await api.agent("Mira"), await api.agent("Juno")
    return await api.group(a["id"], b["id"]), a, b


async def test_conversation_lore_crud_is_the_owners(api: Api) -> None:
    conv, mira, _ = await _group(api)
    url = f"/v1/conversations/{conv['id']}/lore"
    made = await api.client.post(url, json={"keys": [" Kestrel Keep ", "kestrel keep", "要塞"], "content": " A fort of ice. ",
                                            "secondaryKeys": ["winter"], "priority": 5, "memberIds": [mira["id"]]},
                                 headers=ALICE)  # fmt: skip
    assert made.status_code == 201, made.text
    entry = made.json()
    assert (entry["keys"], entry["content"], entry["secondaryKeys"], entry["priority"], entry["enabled"],
            entry["memberIds"], entry["conversationId"], entry["agentId"]) == (
        ["Kestrel Keep", "kestrel keep", "要塞"], "A fort of ice.", ["winter"], 5, True, [mira["id"]], conv["id"], None)
    low = (await api.client.post(url, json={"keys": ["sea"], "content": "The sea is grey."}, headers=ALICE)).json()
    listed = await api.client.get(url, headers=ALICE)
    assert [e["id"] for e in listed.json()] == [entry["id"], low["id"]]  # highest priority first

    patched = await api.client.patch(f"/v1/lore/{entry['id']}", json={"enabled": False, "memberIds": None}, headers=ALICE)
    assert patched.status_code == 200 and (patched.json()["enabled"], patched.json()["memberIds"]) == (False, None)
    assert patched.json()["keys"] == entry["keys"]  # untouched fields stay

    for resp in (await api.client.get(url, headers=BOB),
                 await api.client.post(url, json={"keys": ["x"], "content": "y"}, headers=BOB)):
        assert resp.status_code == 404 and resp.json()["code"] == "conversation_not_found"
    for resp in (await api.client.patch(f"/v1/lore/{entry['id']}", json={"priority": 1}, headers=BOB),
                 await api.client.delete(f"/v1/lore/{entry['id']}", headers=BOB),
                 await api.client.delete("/v1/lore/nope", headers=ALICE)):
        assert resp.status_code == 404 and resp.json()["code"] == "lore_entry_not_found"

    gone = await api.client.delete(f"/v1/lore/{entry['id']}", headers=ALICE)
    assert gone.status_code == 204
    assert [e["id"] for e in (await api.client.get(url, headers=ALICE)).json()] == [low["id"]]


async def test_agent_lore_is_read_by_anyone_and_written_by_admins(api: Api) -> None:
    agent = await api.agent("Mira")
    url = f"/v1/agents/{agent['id']}/lore"
    denied = await api.client.post(url, json={"keys": ["x"], "content": "y"}, headers=ALICE)
    assert denied.status_code == 403 and denied.json()["code"] == "admin_required"
    made = await api.client.post(url, json={"keys": ["北境"], "content": "她来自北境。"}, headers=ADMIN)
    assert made.status_code == 201 and made.json()["agentId"] == agent["id"], made.text
    assert [e["id"] for e in (await api.client.get(url, headers=BOB)).json()] == [made.json()["id"]]
    edit = await api.client.patch(f"/v1/lore/{made.json()['id']}", json={"priority": 2}, headers=ALICE)
    assert edit.status_code == 403 and edit.json()["code"] == "admin_required"
    member_filter = await api.client.patch(f"/v1/lore/{made.json()['id']}", json={"memberIds": ["a"]}, headers=ADMIN)
    assert member_filter.status_code == 422 and member_filter.json()["code"] == "lore_invalid"
    missing = await api.client.get("/v1/agents/nope/lore", headers=ALICE)
    assert missing.status_code == 404 and missing.json()["code"] == "agent_not_found"


@pytest.fixture
async def small_api(db_url: str, tmp_path, model: Any):
    from litestar.testing import AsyncTestClient

    settings = make_settings(db_url, tmp_path, COMPANION_MAX_LORE_ENTRIES="2", COMPANION_MAX_LORE_KEYS="3",
                             COMPANION_MAX_LORE_KEY_CHARS="8", COMPANION_MAX_LORE_CONTENT_CHARS="20")  # fmt: skip
    async with AsyncTestClient(create_app(settings, model=model)) as client:
        yield Api(client, settings)


async def test_limits_and_bad_entries_are_422_with_their_codes(small_api: Api) -> None:
    api = small_api
    conv, _, _ = await _group(api)
    url = f"/v1/conversations/{conv['id']}/lore"

    async def code(body: dict[str, Any]) -> tuple[int, str]:
        resp = await api.client.post(url, json=body, headers=ALICE)
        return resp.status_code, resp.json().get("code", "")

    assert await code({"keys": ["a", "b", "c", "d"], "content": "x"}) == (422, "lore_limit_reached")
    assert await code({"keys": ["a"], "secondaryKeys": ["a", "b", "c", "d"], "content": "x"}) == (422, "lore_limit_reached")
    assert await code({"keys": ["much too long"], "content": "x"}) == (422, "field_too_long")
    assert await code({"keys": ["a"], "content": "x" * 21}) == (422, "field_too_long")
    assert await code({"keys": [" ", ""], "content": "x"}) == (422, "lore_invalid")
    assert await code({"keys": ["a"], "content": "  "}) == (422, "lore_invalid")
    assert await code({"keys": ["a"], "content": "x", "memberIds": ["stranger"]}) == (422, "lore_invalid")
    assert await code({"keys": ["a"], "content": "x", "bogus": 1}) == (422, "validation_failed")
    assert await code({"keys": ["a"], "content": "x", "priority": 5000}) == (422, "validation_failed")
    assert await code({"keys": ["a"], "content": "x"}) == (201, "")
    assert await code({"keys": ["b"], "content": "x"}) == (201, "")
    assert await code({"keys": ["c"], "content": "x"}) == (422, "lore_limit_reached")  # two per conversation


async def test_the_token_budget_is_a_conversation_setting(api: Api) -> None:
    conv, _, _ = await _group(api)
    assert conv["settings"]["lore"] == {"tokenBudget": 400}
    url = f"/v1/conversations/{conv['id']}"
    bad = await api.client.patch(url, json={"settings": {"lore": {"tokenBudget": 5000}}}, headers=ALICE)
    assert bad.status_code == 422
    ok = await api.client.patch(url, json={"settings": {"lore": {"tokenBudget": 0}}}, headers=ALICE)
    assert ok.status_code == 200 and ok.json()["settings"]["lore"] == {"tokenBudget": 0}, ok.text
