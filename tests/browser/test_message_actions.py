"""Per-message actions (issue 29): copy any message, edit the user's own messages too, delete a
message, and Continue on an agent's last message (the agent carries on without a user message)."""

from __future__ import annotations

import httpx
import pytest

from tests.browser.conftest import shot
from tests.browser.test_daily_use import auth, new_direct_chat, open_chat

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]' (playwright)").expect


def contents(server: str, conv_id: str, user: str) -> list[str]:
    items = httpx.get(f"{server}/v1/conversations/{conv_id}/messages?limit=100", headers=auth(user)).json()["items"]
    return [m["content"] for m in reversed(items)]


def test_copy_edit_delete_and_continue(page, server: str, backend: str) -> None:
    conv = new_direct_chat(server, "actor1", "Carry")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.on("dialog", lambda dialog: dialog.accept())
    open_chat(page, "actor1", conv)
    page.fill("#composer-input", "first words")
    page.click("#send")
    agent = page.locator(".msg.agent:not(.draft)")
    expect(agent).to_have_count(1)
    expect(page.locator("#send")).to_be_enabled()

    # Copy: the agent's reply is on the clipboard as its text.
    agent.first.locator(".copy-btn").click()
    expect(page.locator("#toast")).to_have_text("Copied.")
    assert page.evaluate("navigator.clipboard.readText()") == contents(server, conv["id"], "actor1")[1]

    # Edit the user's own message.
    user = page.locator(".msg.user").first
    user.locator(".edit-btn").click()
    page.fill(".edit-input", "better words")
    page.click(".edit-save")
    expect(page.locator(".msg.user .text")).to_have_text(["better words"])
    assert contents(server, conv["id"], "actor1")[0] == "better words"

    # Continue on the agent's last message: a second reply, no new user message.
    expect(agent.first.locator(".continue-btn")).to_be_visible()
    agent.first.locator(".continue-btn").click()
    expect(agent).to_have_count(2)
    expect(page.locator(".msg.user")).to_have_count(1)
    expect(page.locator("#send")).to_be_enabled()
    expect(agent.first.locator(".continue-btn")).to_be_hidden()  # only on the last message
    expect(agent.last.locator(".continue-btn")).to_be_visible()
    shot(page, f"message-actions-desktop-{backend}")

    # Delete the first reply: gone from the page and the history.
    first_reply = contents(server, conv["id"], "actor1")[1]
    agent.first.locator(".delete-btn").click()
    expect(agent).to_have_count(1)
    assert first_reply not in contents(server, conv["id"], "actor1")
    page.reload()
    expect(page.locator(".msg.agent")).to_have_count(1)
