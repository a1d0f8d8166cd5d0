"""A model per member (issue 28), on the wire: an agent's ``modelConfigId`` is the model its replies
are written with (the simulator answers with the model it was asked for), shown in the reply's
metadata and counted per model by ``reply-models``; an unknown id is a 422 naming the known ones."""

from __future__ import annotations

from pathlib import Path

from litestar.testing import AsyncTestClient

from app.main import create_app
from tests.integration.conftest import ADMIN, ALICE, Api, make_settings
from tests.integration.turns.conftest import post_turn


async def test_each_member_replies_with_its_own_model_and_analytics_counts_per_model(sim, db_url: str, tmp_path: Path):
    config = tmp_path / "companion.toml"
    config.write_text(f'[llm.models.default]\nbaseUrl = "{sim.base_url}"\nmodel = "sim"\ntimeoutMs = 15000\n'
                      f'[llm.models.big]\nbaseUrl = "{sim.base_url}"\nmodel = "sim-big"\ntimeoutMs = 15000\n')  # fmt: skip
    settings = make_settings(db_url, tmp_path, COMPANION_CONFIG=str(config), COMPANION_TURN_SPECULATION="off")
    async with AsyncTestClient(create_app(settings), timeout=60) as client:
        api = Api(client, settings)
        bad = await client.post("/v1/agents", json={"name": "Kai", "modelConfigId": "gpt-x"}, headers=ADMIN)
        assert bad.status_code == 422 and bad.json()["code"] == "unknown_model_config", bad.text
        assert "'gpt-x'" in bad.json()["message"] and "big, default" in bad.json()["message"]
        big = await api.agent("Mira", modelConfigId="big")
        plain = await api.agent("Juno")
        assert (big["modelConfigId"], plain["modelConfigId"]) == ("big", None)
        patched = await client.patch(f"/v1/agents/{plain['id']}", json={"modelConfigId": "nope"}, headers=ADMIN)
        assert patched.status_code == 422 and patched.json()["code"] == "unknown_model_config"

        seen, convs = {}, {}
        for agent in (big, plain):
            conv = convs[agent["name"]] = (await client.post("/v1/conversations", json={"kind": "direct", "agentIds": [agent["id"]]},
                                      headers=ALICE)).json()  # fmt: skip
            turn = (await post_turn(api, conv["id"], "我今天上班好累。")).json()
            assert turn["status"] == "completed", turn
            meta = turn["agentMessages"][0]["metadata"]
            seen[agent["name"]] = (meta["model"], meta["modelConfigId"])
        assert seen == {"Mira": ("sim-big", "big"), "Juno": ("sim", "default")}

    config.write_text(f'[llm.models.default]\nbaseUrl = "{sim.base_url}"\nmodel = "sim"\ntimeoutMs = 15000\n')
    async with AsyncTestClient(create_app(settings_without_big := make_settings(
            db_url, tmp_path, COMPANION_CONFIG=str(config), COMPANION_TURN_SPECULATION="off")), timeout=60) as client:  # fmt: skip
        api = Api(client, settings_without_big)  # "big" was taken out of the config file: said, never replaced
        turn = (await post_turn(api, convs["Mira"]["id"], "你还在吗？")).json()
        assert turn["status"] == "failed" and turn["error"]["code"] == "all_replies_dropped", turn
        assert "model config 'big' is not in [llm.models]" in turn["error"]["details"]["agents"][0]["reasons"][0]

        back = await client.patch(f"/v1/agents/{big['id']}", json={"modelConfigId": None}, headers=ADMIN)
        assert back.status_code == 200 and back.json()["modelConfigId"] is None  # back to the actor stage's model

        rows = (await client.get("/v1/analytics/reply-models", headers=ADMIN)).json()
        assert [(r["modelConfigId"], r["replies"], r["dropped"], r["dropRate"]) for r in rows] == [
            ("big", 2, 1, 0.5), ("default", 1, 0, 0.0)]  # the reply without its model counts as dropped
        assert all(r["outputTokens"] > 0 and r["meanMs"] is not None for r in rows)
