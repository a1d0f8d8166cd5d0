from __future__ import annotations

from tests.integration.conftest import ALICE, BOB, Api


async def test_group_conversation_has_members_in_order_and_default_settings(api: Api) -> None:
    a, b = await api.agent("A"), await api.agent("B")
    conv = await api.group(b["id"], a["id"], title="  hi ")
    assert conv["title"] == "hi"
    assert [m["agentId"] for m in conv["members"]] == [b["id"], a["id"]]
    assert conv["settings"]["language"] == "zh-CN"
    assert conv["settings"]["replyLimit"] == 2 and conv["settings"]["chattiness"] == "balanced"
    assert conv["settings"]["autoReply"]["suggestionCount"] == 3
    assert conv["messageCount"] == 0


async def test_group_member_count_rules(api: Api) -> None:
    ids = [(await api.agent(f"A{i}"))["id"] for i in range(9)]
    for agent_ids in ([ids[0]], ids[:9], [ids[0], ids[0]]):
        resp = await api.client.post("/v1/conversations", json={"kind": "group", "agentIds": agent_ids}, headers=ALICE)
        assert resp.status_code == 422, resp.text
    missing = await api.client.post("/v1/conversations", json={"kind": "group", "agentIds": [ids[0], "nope"]}, headers=ALICE)
    assert missing.status_code == 404


async def test_direct_conversation_is_unique_per_user_and_agent(api: Api) -> None:
    a = await api.agent("A")
    first = await api.client.post("/v1/conversations", json={"kind": "direct", "agentIds": [a["id"]]}, headers=ALICE)
    again = await api.client.post("/v1/conversations", json={"kind": "direct", "agentIds": [a["id"]]}, headers=ALICE)
    other = await api.client.post("/v1/conversations", json={"kind": "direct", "agentIds": [a["id"]]}, headers=BOB)
    assert first.status_code == 201 and again.status_code == 200
    assert first.json()["id"] == again.json()["id"] != other.json()["id"]
    two = await api.client.post("/v1/conversations", json={"kind": "direct", "agentIds": [a["id"], a["id"]]}, headers=ALICE)
    assert two.status_code == 422


async def test_other_users_conversation_is_404(api: Api) -> None:
    a, b = await api.agent("A"), await api.agent("B")
    conv = await api.group(a["id"], b["id"])
    for method, path in (("GET", ""), ("PATCH", ""), ("GET", "/messages"), ("POST", "/messages")):
        body = {"content": "hi"} if path else {"title": "x"}
        resp = await api.client.request(method, f"/v1/conversations/{conv['id']}{path}", headers=BOB, json=body if method != "GET" else None)
        assert resp.status_code == 404, (method, path, resp.text)
        assert resp.json()["code"] == "conversation_not_found"
    assert (await api.client.get("/v1/conversations", headers=BOB)).json() == []


async def test_settings_are_validated_and_merged(api: Api) -> None:
    a, b = await api.agent("A"), await api.agent("B")
    conv = await api.group(a["id"], b["id"], settings={"language": "en", "autoReply": {"suggestionCount": 4}})
    assert conv["settings"]["language"] == "en" and conv["settings"]["autoReply"]["suggestionCount"] == 4
    url = f"/v1/conversations/{conv['id']}"
    ok = await api.client.patch(url, json={"settings": {"autoReply": {"enabled": False}}}, headers=ALICE)
    assert ok.status_code == 200
    assert ok.json()["settings"]["autoReply"] == {**conv["settings"]["autoReply"], "enabled": False}
    assert ok.json()["version"] == conv["version"] + 1
    bad_values = (
        {"replyLimit": 5}, {"chattiness": "loud"}, {"unknownKey": 1}, {"language": "not a tag"},
        {"autoReply": {"suggestionCount": 7}}, {"autoReply": {"bogus": True}}, {"story": {"enabled": True}},
        {"story": {"maxStateBytes": 100}},
    )  # fmt: skip
    for bad in bad_values:
        resp = await api.client.patch(url, json={"settings": bad}, headers=ALICE)
        assert resp.status_code == 422, (bad, resp.text)
        assert resp.json()["code"] == "invalid_settings"


async def test_members_can_be_added_and_removed_in_groups(api: Api) -> None:
    a, b, c = await api.agent("A"), await api.agent("B"), await api.agent("C")
    conv = await api.group(a["id"], b["id"])
    url = f"/v1/conversations/{conv['id']}/members"
    added = await api.client.post(url, json={"agentId": c["id"]}, headers=ALICE)
    assert [m["agentId"] for m in added.json()["members"]] == [a["id"], b["id"], c["id"]]
    dup = await api.client.post(url, json={"agentId": c["id"]}, headers=ALICE)
    assert dup.status_code == 409
    removed = await api.client.delete(f"{url}/{a['id']}", headers=ALICE)
    assert [m["agentId"] for m in removed.json()["members"]] == [b["id"], c["id"]]
    too_few = await api.client.delete(f"{url}/{b['id']}", headers=ALICE)
    assert too_few.status_code == 422 and too_few.json()["code"] == "invalid_member_count"
