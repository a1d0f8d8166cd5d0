"""Settings that name a model config the app does not have are rejected, naming the ones it has."""

from __future__ import annotations

from tests.integration.conftest import ALICE


async def agents(api) -> list[str]:
    return [(await api.agent(name))["id"] for name in ("Mira", "Juno")]


async def test_an_unknown_story_model_config_is_a_422_naming_the_existing_configs(sim_api):
    body = {"kind": "group", "agentIds": await agents(sim_api), "settings": {"story": {"enabled": True, "modelConfigId": "gpt-x"}}}
    resp = await sim_api.client.post("/v1/conversations", json=body, headers=ALICE)
    assert resp.status_code == 422, resp.text
    err = resp.json()
    assert err["code"] == "unknown_model_config"
    assert "story.modelConfigId" in err["message"] and "'gpt-x'" in err["message"] and "default" in err["message"]


async def test_a_known_model_config_is_accepted_and_an_unknown_one_cannot_be_patched_in(sim_api):
    conv = await sim_api.group(*await agents(sim_api), settings={"story": {"enabled": True, "modelConfigId": "default"}})
    assert conv["settings"]["story"]["modelConfigId"] == "default"
    for patch in ({"story": {"initializerModelConfigId": "nope"}}, {"autoReply": {"modelConfigId": "nope"}}):
        resp = await sim_api.client.patch(f"/v1/conversations/{conv['id']}", json={"settings": patch}, headers=ALICE)
        assert resp.status_code == 422, resp.text
        assert resp.json()["code"] == "unknown_model_config"
    got = await sim_api.client.get(f"/v1/conversations/{conv['id']}", headers=ALICE)
    assert got.json()["settings"]["autoReply"]["modelConfigId"] is None


async def test_a_disabled_story_may_keep_any_model_config_id(sim_api):
    conv = await sim_api.group(*await agents(sim_api), settings={"story": {"enabled": False, "modelConfigId": "later"}})
    assert conv["settings"]["story"]["enabled"] is False
