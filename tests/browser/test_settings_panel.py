"""The members and settings panel (issue 29): rename, mute, speak now, add and remove members, the
reply settings, Story and suggestions, auto mode start and stop, delete the conversation; and an
admin deletes an agent in the catalogue. Every change is checked through the API, not the page."""

from __future__ import annotations

import httpx
import pytest

from tests.browser.conftest import PHONE, shot, token
from tests.browser.test_daily_use import auth, sign_in

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]' (playwright)").expect


def conversation(server: str, user: str, conv_id: str) -> httpx.Response:
    return httpx.get(f"{server}/v1/conversations/{conv_id}", headers=auth(user))


def test_the_settings_panel_changes_members_settings_and_auto_mode_and_deletes_the_conversation(
    page, server: str, simulator, backend: str
) -> None:
    names = ["Mira", "Oskar", "Pia", "Quinn"]
    agents = [httpx.post(f"{server}/v1/agents", json={"name": n}, headers=auth("root", True)).json() for n in names]
    mira, oskar, pia, quinn = agents
    conv = httpx.post(f"{server}/v1/conversations", headers=auth("planner"), json={
        "kind": "group", "agentIds": [mira["id"], oskar["id"], pia["id"]], "settings": {"language": "en"}}).json()
    httpx.post(f"{server}/v1/conversations/{conv['id']}/messages", json={"content": "hello all"},
               headers=auth("planner")).raise_for_status()  # something for auto mode and "speak now" to answer
    page.on("dialog", lambda dialog: dialog.accept())
    sign_in(page, "planner")
    page.goto(f"/#/c/{conv['id']}")
    page.click("#settings-btn")
    expect(page.locator("#settings-panel")).to_be_visible()
    expect(page.locator(".member-row")).to_have_count(3)
    shot(page, "settings-panel-desktop")

    # Rename: the header and the list follow.
    page.fill("#settings-title", "Trip planning")
    page.click("#settings-rename")
    expect(page.locator("#chat-title")).to_have_text("Trip planning")
    expect(page.locator(f'[data-conversation-id="{conv["id"]}"]')).to_contain_text("Trip planning")
    assert conversation(server, "planner", conv["id"]).json()["title"] == "Trip planning"

    # Mute Oskar, remove Pia, add Quinn.
    page.locator(f'.member-row[data-agent-id="{oskar["id"]}"] .member-mute').check()
    expect(page.locator(f'.member-row[data-agent-id="{oskar["id"]}"] .badge')).to_have_text("muted")
    page.locator(f'.member-row[data-agent-id="{pia["id"]}"] .member-remove').click()
    expect(page.locator(".member-row")).to_have_count(2)
    page.select_option("#member-add-select", quinn["id"])
    page.click("#member-add")
    expect(page.locator(".member-row")).to_have_count(3)
    members = {m["agentId"]: m for m in conversation(server, "planner", conv["id"]).json()["members"]}
    assert set(members) == {mira["id"], oskar["id"], quinn["id"]}
    assert members[oskar["id"]]["muted"] and not members[mira["id"]]["muted"]

    # The reply settings, Story off, suggestions on with two chips.
    page.select_option("#settings-order", "list")
    page.select_option("#settings-limit", "1")
    page.select_option("#settings-chattiness", "quiet")
    page.select_option("#settings-language", "zh-CN")
    page.uncheck("#settings-story")
    page.check("#settings-suggestions")
    page.select_option("#settings-suggestion-count", "2")
    page.click("#settings-save")
    expect(page.locator("#toast")).to_have_text("Settings saved.")
    settings = conversation(server, "planner", conv["id"]).json()["settings"]
    assert (settings["replyOrder"], settings["replyLimit"], settings["chattiness"], settings["language"]) == ("list", 1, "quiet", "zh-CN")
    assert settings["story"]["enabled"] is False
    assert settings["autoReply"]["enabled"] is True and settings["autoReply"]["suggestionCount"] == 2

    # Speak now: the muted member replies at once, without a message from the user.
    page.locator(f'.member-row[data-agent-id="{oskar["id"]}"] .member-speak').click()
    expect(page.locator(f'.msg.agent:not(.draft)[data-agent-id="{oskar["id"]}"]')).to_have_count(1, timeout=20_000)
    expect(page.locator("#send")).to_be_enabled()

    # Auto mode: started with a long pause between turns, then stopped from the panel.
    page.fill("#auto-turns", "5")
    page.fill("#auto-delay", "20")
    page.click("#auto-start")
    expect(page.locator("#auto-status")).to_contain_text("Running")
    expect(page.locator("#auto-stop")).to_be_visible()
    page.click("#auto-stop")
    expect(page.locator("#auto-start")).to_be_visible(timeout=10_000)  # auto.ended redraws the panel
    expect(page.locator("#auto-status")).to_contain_text("stopped (you stopped it)")
    run = httpx.get(f"{server}/v1/conversations/{conv['id']}/auto", headers=auth("planner")).json()
    assert run["status"] == "stopped" and run["reason"] == "user_stop"

    page.set_viewport_size(PHONE)
    expect(page.locator("#settings-panel")).to_be_visible()
    shot(page, "settings-panel-phone")
    page.set_viewport_size({"width": 1280, "height": 800})

    # Delete: the conversation is gone, from the list and the API.
    page.click("#conversation-delete")
    expect(page).to_have_url(f"{server}/#/")
    expect(page.locator(f'[data-conversation-id="{conv["id"]}"]')).to_have_count(0)
    assert conversation(server, "planner", conv["id"]).status_code == 404


def test_an_admin_deletes_an_agent_and_is_told_when_it_is_still_a_member(page, server: str) -> None:
    spare = httpx.post(f"{server}/v1/agents", json={"name": "Spare Rolf"}, headers=auth("root", True)).json()
    seated = httpx.post(f"{server}/v1/agents", json={"name": "Seated Sal"}, headers=auth("root", True)).json()
    httpx.post(f"{server}/v1/conversations", json={"kind": "direct", "agentIds": [seated["id"]]},
               headers=auth("someone")).raise_for_status()
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto("/")
    page.fill("#token-input", token("root", admin=True))
    page.click("#token-submit")
    page.goto("/#/agents")
    page.locator(f'[data-agent-id="{spare["id"]}"] .agent-delete').click()
    expect(page.locator(f'[data-agent-id="{spare["id"]}"]')).to_have_count(0)
    assert httpx.get(f"{server}/v1/agents/{spare['id']}", headers=auth("root", True)).status_code == 404
    page.locator(f'[data-agent-id="{seated["id"]}"] .agent-delete').click()
    expect(page.locator("#toast")).to_contain_text("still a member of a conversation")
    expect(page.locator(f'[data-agent-id="{seated["id"]}"]')).to_have_count(1)
