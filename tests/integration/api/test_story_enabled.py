"""Issue 31: ``story.enabled`` as the product seed says — on when the object is present and
``enabled`` is not false; a conversation without a ``story`` object has it off."""

from __future__ import annotations

from tests.integration.conftest import ALICE


async def _agents(api) -> list[str]:
    return [(await api.agent(name))["id"] for name in ("Mira", "Juno")]


async def _create(api, settings: dict | None):
    body = {"kind": "group", "agentIds": await _agents(api), **({"settings": settings} if settings is not None else {})}
    return await api.client.post("/v1/conversations", json=body, headers=ALICE)


async def test_a_story_object_without_enabled_turns_the_story_on(sim_api) -> None:
    resp = await _create(sim_api, {"story": {"modelConfigId": "default"}})
    assert resp.status_code == 201, resp.text
    story = resp.json()["settings"]["story"]
    assert story["enabled"] is True and story["modelConfigId"] == "default"
    assert story["initializerModelConfigId"] is None  # the initializer uses modelConfigId then


async def test_no_story_object_or_enabled_false_leaves_it_off(sim_api) -> None:
    for settings in (None, {"language": "en"}, {"story": {"enabled": False, "modelConfigId": "default"}}):
        resp = await _create(sim_api, settings)
        assert resp.status_code == 201, resp.text
        assert resp.json()["settings"]["story"]["enabled"] is False, settings


async def test_a_story_object_on_without_a_model_config_is_a_422_that_says_how(sim_api) -> None:
    for story in ({}, {"seed": 5}, {"enabled": True}):
        resp = await _create(sim_api, {"story": story})
        assert resp.status_code == 422, (story, resp.text)
        err = resp.json()
        assert err["code"] == "invalid_settings" and "story.modelConfigId is required" in err["message"]
        assert '"enabled": false' in err["message"]


async def test_a_patch_with_a_story_object_follows_the_same_rule(sim_api) -> None:
    conv = (await _create(sim_api, None)).json()
    path = f"/v1/conversations/{conv['id']}"
    kept_off = await sim_api.client.patch(path, json={"settings": {"story": {"enabled": False, "modelConfigId": "default"}}},
                                          headers=ALICE)  # fmt: skip
    assert kept_off.status_code == 200 and kept_off.json()["settings"]["story"]["enabled"] is False
    on = await sim_api.client.patch(path, json={"settings": {"story": {"seed": 9}}}, headers=ALICE)
    assert on.status_code == 200, on.text
    story = on.json()["settings"]["story"]
    assert story["enabled"] is True and story["seed"] == 9 and story["modelConfigId"] == "default"
    off = await sim_api.client.patch(path, json={"settings": {"story": {"enabled": False}}}, headers=ALICE)
    assert off.json()["settings"]["story"]["enabled"] is False and off.json()["settings"]["story"]["seed"] == 9
    unrelated = await sim_api.client.patch(path, json={"settings": {"replyLimit": 1}}, headers=ALICE)
    assert unrelated.json()["settings"]["story"]["enabled"] is False  # no story object: nothing changes
