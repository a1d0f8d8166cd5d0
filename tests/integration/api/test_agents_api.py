from __future__ import annotations

import time

from tests.integration.conftest import ADMIN, ALICE, SECRET, Api, bearer


async def test_admin_creates_agent_and_any_user_reads_it(api: Api) -> None:
    created = await api.agent("莉娅", aliases=["Leah", " leah "], capabilities={"comfort": 0.9})
    assert created["aliases"] == ["Leah"]
    assert created["capabilities"]["comfort"] == 0.9
    listed = (await api.client.get("/v1/agents", headers=ALICE)).json()
    assert [a["name"] for a in listed] == ["莉娅"]
    one = await api.client.get(f"/v1/agents/{created['id']}", headers=ALICE)
    assert one.status_code == 200 and one.json()["storyBackground"] == ""


async def test_non_admin_agent_write_is_forbidden(api: Api) -> None:
    resp = await api.client.post("/v1/agents", json={"name": "x"}, headers=ALICE)
    assert resp.status_code == 403 and resp.json()["code"] == "admin_required"


async def test_patch_updates_only_given_fields(api: Api) -> None:
    agent = await api.agent("A", headline="h")
    resp = await api.client.patch(f"/v1/agents/{agent['id']}", json={"description": "d"}, headers=ADMIN)
    assert resp.status_code == 200
    assert resp.json()["headline"] == "h" and resp.json()["description"] == "d"


async def test_delete_agent_then_404(api: Api) -> None:
    agent = await api.agent("A")
    assert (await api.client.delete(f"/v1/agents/{agent['id']}", headers=ADMIN)).status_code == 204
    resp = await api.client.get(f"/v1/agents/{agent['id']}", headers=ALICE)
    assert resp.status_code == 404 and resp.json()["code"] == "agent_not_found"


async def test_agent_in_a_conversation_cannot_be_deleted(api: Api) -> None:
    a, b = await api.agent("A"), await api.agent("B")
    await api.group(a["id"], b["id"])
    resp = await api.client.delete(f"/v1/agents/{a['id']}", headers=ADMIN)
    assert resp.status_code == 409 and resp.json()["code"] == "agent_in_use"


async def test_invalid_agent_bodies_are_422(api: Api) -> None:
    for body in ({"name": ""}, {"name": "x" * 65}, {"name": "ok", "bogus": 1}, {"name": "ok", "capabilities": {"comfort": 1.5}}, {}):
        resp = await api.client.post("/v1/agents", json=body, headers=ADMIN)
        assert resp.status_code == 422, (body, resp.text)
        assert resp.json()["code"] == "validation_failed"
    blank = await api.client.post("/v1/agents", json={"name": "   "}, headers=ADMIN)
    assert blank.status_code == 422


async def test_malformed_json_is_400(api: Api) -> None:
    resp = await api.client.post("/v1/agents", content=b'{"name":', headers={**ADMIN, "content-type": "application/json"})
    assert resp.status_code == 400 and resp.json()["code"] == "invalid_json"


async def test_missing_bad_and_expired_tokens_are_401(api: Api) -> None:
    assert (await api.client.get("/v1/agents")).json()["code"] == "missing_token"
    bad = await api.client.get("/v1/agents", headers={"Authorization": "Bearer not.a.jwt"})
    assert bad.status_code == 401 and bad.json()["code"] == "invalid_token"
    forged = await api.client.get("/v1/agents", headers={"Authorization": "Basic abc"})
    assert forged.status_code == 401
    expired = bearer("alice", ttl_s=10, now=time.time() - 3600)
    resp = await api.client.get("/v1/agents", headers=expired)
    assert resp.status_code == 401 and resp.json()["code"] == "token_expired"


async def test_token_signed_with_another_secret_is_rejected(api: Api) -> None:
    from app.auth.tokens import issue_token

    token = issue_token(SECRET[::-1], "alice")
    resp = await api.client.get("/v1/agents", headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 401


async def test_health_and_readiness(api: Api) -> None:
    assert (await api.client.get("/healthz")).json() == {"status": "ok"}
    ready = await api.client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["database"] == "ok"


async def test_openapi_schema_is_served(api: Api) -> None:
    resp = await api.client.get("/schema/openapi.json")
    assert resp.status_code == 200
    assert "/v1/agents" in resp.json()["paths"]


async def test_prompt_and_title_limits_are_settings(db_url, tmp_path, model) -> None:
    from litestar.testing import AsyncTestClient

    from app.main import create_app
    from tests.integration.conftest import make_settings

    settings = make_settings(db_url, tmp_path, COMPANION_MAX_PROMPT_CHARS="10", COMPANION_MAX_TITLE_CHARS="5")
    async with AsyncTestClient(create_app(settings, model=model)) as client:
        long = await client.post("/v1/agents", json={"name": "A", "description": "x" * 11}, headers=ADMIN)
        assert long.status_code == 422 and long.json()["details"] == {"field": "description", "limit": 10}
        a = (await client.post("/v1/agents", json={"name": "A", "description": "x" * 10}, headers=ADMIN)).json()
        b = (await client.post("/v1/agents", json={"name": "B"}, headers=ADMIN)).json()
        body = {"kind": "group", "agentIds": [a["id"], b["id"]], "title": "toolong"}
        assert (await client.post("/v1/conversations", json=body, headers=ALICE)).status_code == 422
