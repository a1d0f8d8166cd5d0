"""``settings.selection``: the mode and the hybrid margin, validated, defaulted and merged like the
other settings blocks (SQLite and PostgreSQL)."""

from __future__ import annotations

from scheduling import DEFAULT_HYBRID_MARGIN
from tests.integration.conftest import ALICE, Api


async def test_selection_defaults_to_hybrid_with_the_tuned_margin(api: Api) -> None:
    a, b = await api.agent("A"), await api.agent("B")
    conv = await api.group(a["id"], b["id"])
    assert conv["settings"]["selection"] == {"mode": "hybrid", "hybridMargin": DEFAULT_HYBRID_MARGIN}


async def test_selection_mode_and_margin_are_set_and_merged_one_key_at_a_time(api: Api) -> None:
    a, b = await api.agent("A"), await api.agent("B")
    conv = await api.group(a["id"], b["id"], settings={"selection": {"mode": "llm"}})
    assert conv["settings"]["selection"] == {"mode": "llm", "hybridMargin": DEFAULT_HYBRID_MARGIN}
    url = f"/v1/conversations/{conv['id']}"
    resp = await api.client.patch(url, json={"settings": {"selection": {"hybridMargin": 0.4}}}, headers=ALICE)
    assert resp.status_code == 200, resp.text
    assert resp.json()["settings"]["selection"] == {"mode": "llm", "hybridMargin": 0.4}
    resp = await api.client.patch(url, json={"settings": {"selection": {"mode": "scorer"}}}, headers=ALICE)
    assert resp.json()["settings"]["selection"] == {"mode": "scorer", "hybridMargin": 0.4}


async def test_bad_selection_settings_are_a_422_naming_the_field(api: Api) -> None:
    a, b = await api.agent("A"), await api.agent("B")
    conv = await api.group(a["id"], b["id"])
    url = f"/v1/conversations/{conv['id']}"
    for bad, field in (({"mode": "oracle"}, "selection.mode"), ({"mode": "LLM"}, "selection.mode"),
                       ({"hybridMargin": -0.1}, "selection.hybridMargin"), ({"hybridMargin": 11}, "selection.hybridMargin"),
                       ({"hybridMargin": "wide"}, "selection.hybridMargin"), ({"margin": 1.0}, "margin")):  # fmt: skip
        resp = await api.client.patch(url, json={"settings": {"selection": bad}}, headers=ALICE)
        assert resp.status_code == 422, (bad, resp.text)
        assert resp.json()["code"] == "invalid_settings" and field in resp.json()["message"], resp.json()
    created = await api.client.post("/v1/conversations", json={"kind": "group", "agentIds": [a["id"], b["id"]],
                                                               "settings": {"selection": "hybrid"}}, headers=ALICE)
    assert created.status_code == 422 and created.json()["code"] == "invalid_settings"
