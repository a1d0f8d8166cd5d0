"""Issue 11 items 1-4 and 9: no input gives a 500, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import pytest

from tests.integration.conftest import ADMIN, ALICE, Api, bearer

NUL = "a\u0000b"


async def _conv(api: Api) -> dict:
    a = await api.agent("莉娅")
    b = await api.agent("周衡")
    return await api.group(a["id"], b["id"])


@pytest.mark.parametrize(
    "path", ["/v1/conversations/%00", "/v1/agents/a%00b", "/v1/conversations/x%00/messages", "/v1/analytics/%00"]
)
async def test_a_nul_in_a_path_id_is_a_404(api: Api, path: str) -> None:
    resp = await api.client.get(path, headers=ADMIN)
    assert resp.status_code == 404, resp.text
    assert resp.json()["code"] == "not_found"


async def test_a_nul_in_any_text_field_is_a_422_invalid_character(api: Api) -> None:
    conv = await _conv(api)
    cases = [
        ("post", f"/v1/conversations/{conv['id']}/messages", {"content": NUL}, ALICE),
        ("post", f"/v1/conversations/{conv['id']}/turns", {"content": NUL}, ALICE),
        ("post", f"/v1/conversations/{conv['id']}/turns", {"content": "hi", "idempotencyKey": NUL}, ALICE),
        ("patch", f"/v1/conversations/{conv['id']}", {"title": NUL}, ALICE),
        ("post", "/v1/agents", {"name": NUL}, ADMIN),
    ]
    for method, path, body, headers in cases:
        resp = await api.client.request(method, path, json=body, headers=headers)
        assert resp.status_code == 422, (path, body, resp.text)
        assert resp.json()["code"] == "invalid_character"
    page = await api.client.get(f"/v1/conversations/{conv['id']}/messages", headers=ALICE)
    assert page.json()["items"] == []


async def test_an_escaped_backslash_before_u0000_is_not_a_nul(api: Api) -> None:
    conv = await _conv(api)
    raw = b'{"content": "path C:\\\\u0000x"}'
    resp = await api.client.post(f"/v1/conversations/{conv['id']}/messages", content=raw,
                                 headers={**ALICE, "content-type": "application/json"})  # fmt: skip
    assert resp.status_code == 201, resp.text
    assert resp.json()["content"] == "path C:\\u0000x"


async def test_a_nul_in_a_query_parameter_or_token_subject_is_rejected(api: Api) -> None:
    conv = await _conv(api)
    resp = await api.client.get(f"/v1/conversations/{conv['id']}/messages?order=a%00", headers=ALICE)
    assert resp.status_code == 422 and resp.json()["code"] == "invalid_character"
    resp = await api.client.get("/v1/conversations", headers=bearer("ali\u0000ce"))
    assert resp.status_code == 401 and resp.json()["code"] == "invalid_token"


async def test_deeply_nested_json_is_a_400_on_every_endpoint(api: Api) -> None:
    conv = await _conv(api)
    deep = b"[" * 1000 + b"]" * 1000
    for path in ("/v1/agents", f"/v1/conversations/{conv['id']}/messages", f"/v1/conversations/{conv['id']}/turns",
                 "/v1/conversations"):  # fmt: skip
        resp = await api.client.post(path, content=deep, headers={**ADMIN, "content-type": "application/json"})
        assert resp.status_code == 400, (path, resp.text)
        assert resp.json()["code"] == "json_too_deep"
    nested = b'{"content": "x", "a": ' + b'{"b": ' * 40 + b"1" + b"}" * 40 + b"}"
    resp = await api.client.post(f"/v1/conversations/{conv['id']}/messages", content=nested,
                                 headers={**ALICE, "content-type": "application/json"})  # fmt: skip
    assert resp.status_code == 400 and resp.json()["code"] == "json_too_deep"


@pytest.mark.parametrize(
    "query",
    ["before=9223372036854775808", "order=asc&after=1180591620717411303424", "before=-1", "limit=0",
     "limit=99999999999999999999999"],
)  # fmt: skip
async def test_out_of_range_integers_are_a_422(api: Api, query: str) -> None:
    conv = await _conv(api)
    resp = await api.client.get(f"/v1/conversations/{conv['id']}/messages?{query}", headers=ALICE)
    assert resp.status_code == 422, resp.text
    assert resp.json()["code"] in {"validation_failed", "invalid_limit"}


@pytest.mark.parametrize("since", ["999999999d", "99999999999999999999w", "0001-01-01", "9999-12-31T23:59:59"])
async def test_analytics_time_filters_never_overflow(api: Api, since: str) -> None:
    resp = await api.client.get(f"/v1/analytics/speaking-share?since={since}", headers=ADMIN)
    assert resp.status_code == 422, resp.text
    assert resp.json()["code"] == "invalid_filter" and resp.json()["details"]["parameter"] == "since"


async def test_a_text_plain_body_is_a_415(api: Api) -> None:
    conv = await _conv(api)
    resp = await api.client.post(f"/v1/conversations/{conv['id']}/messages", content=b'{"content": "hi"}',
                                 headers={**ALICE, "content-type": "text/plain"})  # fmt: skip
    assert resp.status_code == 415 and resp.json()["code"] == "unsupported_media_type"


async def test_options_lists_every_method_of_a_path(api: Api) -> None:
    resp = await api.client.options("/v1/agents")
    allowed = {m.strip() for m in resp.headers["allow"].split(",")}
    assert {"GET", "POST", "OPTIONS"} <= allowed


async def test_timestamps_always_carry_a_timezone(api: Api) -> None:
    conv = await _conv(api)
    posted = (await api.client.post(f"/v1/conversations/{conv['id']}/messages", json={"content": "hi"},
                                    headers=ALICE)).json()  # fmt: skip
    read = (await api.client.get(f"/v1/conversations/{conv['id']}/messages", headers=ALICE)).json()["items"][0]
    conv_read = (await api.client.get(f"/v1/conversations/{conv['id']}", headers=ALICE)).json()
    agents = (await api.client.get("/v1/agents", headers=ALICE)).json()
    stamps = [posted["createdAt"], read["createdAt"], conv_read["createdAt"], agents[0]["createdAt"]]
    assert all(s.endswith("Z") or s.endswith("+00:00") for s in stamps), stamps
