"""Daily use of the web client (issue 29): a long conversation opens at its newest message, older
pages load in place, every tab follows the conversation live, the reader's scroll position is
respected, failures stay readable, and the composer and forms behave under real hands."""

from __future__ import annotations

import httpx
import pytest

from tests.browser.conftest import DESKTOP, PHONE, shot, token

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]' (playwright)").expect

LONG = 150  # more than one page (100) of history


def auth(user: str, admin: bool = False) -> dict[str, str]:
    return {"Authorization": f"Bearer {token(user, admin)}"}


def new_direct_chat(server: str, user: str, agent_name: str, **settings) -> dict:
    agent = httpx.post(f"{server}/v1/agents", json={"name": agent_name}, headers=auth("root", True)).json()
    return httpx.post(f"{server}/v1/conversations", json={"kind": "direct", "agentIds": [agent["id"]],
                      "settings": {"language": "en", **settings}}, headers=auth(user)).json()  # fmt: skip


def sign_in(page, user: str) -> None:
    page.goto("/")
    page.fill("#dev-user", user)
    page.click("#dev-token")
    expect(page.locator("#who")).to_have_text(user)


def open_chat(page, user: str, conv: dict) -> None:
    sign_in(page, user)
    page.goto(f"/#/c/{conv['id']}")
    expect(page.locator("#chat-title")).to_be_visible()


@pytest.fixture(scope="module")
def long_chat(server: str) -> dict:
    """A conversation of LONG user messages ("line 001" … "line 150"), stored through the API."""
    conv = new_direct_chat(server, "reader", "Patient")
    with httpx.Client(base_url=server, headers=auth("reader")) as client:
        for i in range(1, LONG + 1):
            client.post(f"/v1/conversations/{conv['id']}/messages", json={"content": f"line {i:03d}"}).raise_for_status()
    return conv


def timeline_at_bottom(page) -> bool:
    return page.locator("#timeline").evaluate("t => t.scrollHeight - t.scrollTop - t.clientHeight < 4")


def test_a_long_conversation_opens_at_its_newest_message_and_again_after_a_reload(page, long_chat) -> None:
    open_chat(page, "reader", long_chat)
    newest = page.locator(".msg .text", has_text=f"line {LONG:03d}")
    expect(newest).to_be_in_viewport()
    assert timeline_at_bottom(page)
    shot(page, "long-chat-opened-desktop")
    page.reload()
    expect(newest).to_be_in_viewport()
    assert timeline_at_bottom(page)
    page.set_viewport_size(PHONE)
    page.reload()
    expect(newest).to_be_in_viewport()
    shot(page, "long-chat-opened-phone")


def test_load_earlier_messages_keeps_the_readers_place(page, long_chat) -> None:
    open_chat(page, "reader", long_chat)
    expect(page.locator(".msg.user")).to_have_count(100)
    oldest_loaded = page.locator(".msg .text", has_text=f"line {LONG - 99:03d}")
    page.locator("#timeline").evaluate("t => { t.scrollTop = 0; }")
    top_before = oldest_loaded.evaluate("e => e.getBoundingClientRect().top")
    page.click(".load-earlier")
    expect(page.locator(".msg.user")).to_have_count(LONG)
    expect(page.locator(".load-earlier")).to_have_count(0)  # the whole history is loaded
    texts = page.locator(".msg.user .text").all_inner_texts()
    assert texts == [f"line {i:03d}" for i in range(1, LONG + 1)]  # in order, none twice
    top_after = oldest_loaded.evaluate("e => e.getBoundingClientRect().top")
    assert abs(top_after - top_before) < 4, (top_before, top_after)  # the reader's place is kept
    page.locator("#timeline").evaluate("t => { t.scrollTop = 0; }")
    expect(page.locator(".msg .text", has_text="line 001")).to_be_in_viewport()
    shot(page, "long-chat-earlier-desktop")
