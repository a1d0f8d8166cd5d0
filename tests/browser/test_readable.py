"""Readable by users, inspectable by developers (issue 29): messages are safe Markdown (never raw
HTML) with the time they were written; the turn's line and the Story panel speak in words, the codes
behind "details"; members' avatars never share a colour."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.browser.conftest import PHONE, shot
from tests.browser.test_daily_use import auth, open_chat

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]' (playwright)").expect

MARKDOWN = ("**bold** and *waves hello* with `code`\n- one\n- two\n"
            "<img src=x onerror=\"window.__pwned=1\"> <b>not bold</b> [a link](https://example.com/x) [bad](javascript:alert(1))")
CODES = re.compile(r"\b(llm|mention|fallback|waiting_for_acceptance|not_started|advance_pending)\b")


def test_messages_are_safe_markdown_with_times_and_the_turn_and_story_speak_in_words(page, server: str, backend: str) -> None:
    names = ["Ada", "Bo", "Cy", "Di"]
    agents = [httpx.post(f"{server}/v1/agents", json={"name": n}, headers=auth("root", True)).json() for n in names]
    conv = httpx.post(f"{server}/v1/conversations", headers=auth("reader2"), json={
        "kind": "group", "agentIds": [a["id"] for a in agents],
        "settings": {"language": "en", "story": {"enabled": True, "modelConfigId": "default"}}}).json()
    stored = httpx.post(f"{server}/v1/conversations/{conv['id']}/messages", json={"content": MARKDOWN},
                        headers=auth("reader2")).json()
    open_chat(page, "reader2", conv)

    text = page.locator(f'.msg[data-message-id="{stored["id"]}"] .text')
    expect(text.locator("strong")).to_have_text("bold")
    expect(text.locator("em")).to_have_text("waves hello")
    expect(text.locator("code")).to_have_text("code")
    expect(text.locator("li")).to_have_text(["one", "two"])
    expect(text.locator("img")).to_have_count(0)  # HTML is text, never markup
    expect(text.locator("b")).to_have_count(0)
    expect(text).to_contain_text('<img src=x onerror="window.__pwned=1">')
    assert page.evaluate("window.__pwned") is None
    link = text.locator("a")
    expect(link).to_have_count(1)  # the javascript: one stays text
    expect(link).to_have_attribute("href", "https://example.com/x")
    expect(link).to_have_attribute("rel", "noopener noreferrer nofollow")
    expect(text).to_contain_text("[bad](javascript:alert(1))")
    when = page.locator(f'.msg[data-message-id="{stored["id"]}"] time.when')
    expect(when).to_be_visible()
    assert when.get_attribute("datetime").startswith(stored["createdAt"][:16])

    # Distinct avatar colours for the four members.
    colours = page.locator(".chat-head .avatar").evaluate_all("els => els.map((e) => getComputedStyle(e).backgroundColor)")
    assert len(colours) == 4 and len(set(colours)) == 4, colours

    # A turn: its line is in words; the readings and sources are under a closed "details".
    page.fill("#composer-input", "Ada, I feel sad today")
    page.click("#send")
    expect(page.locator(".msg.agent:not(.draft)").first).to_be_visible(timeout=20_000)
    expect(page.locator("#send")).to_be_enabled(timeout=20_000)
    trace = page.locator(".trace").first
    expect(trace.locator(".trace-who")).to_contain_text("Ada")
    expect(trace.locator(".trace-selection")).to_be_hidden()
    assert not CODES.search(trace.inner_text()), trace.inner_text()
    for badge in page.locator(".msg.agent .badge").all_inner_texts():
        assert not CODES.search(badge), badge
    expect(page.locator(".msg.agent time.when").first).to_be_visible()
    trace.locator("summary").click()
    expect(trace.locator(".trace-selection")).to_be_visible()
    expect(trace.locator(".trace-selection")).to_contain_text("decided by")

    # The Story panel: the story in words, the codes under "details".
    page.click("#story-btn")
    card = page.locator("#story-panel .story-agent").first
    expect(card.locator(".story-words")).to_contain_text("Now")
    expect(card.locator(".story-status")).to_be_hidden()
    visible = page.locator("#story-panel").inner_text()
    assert not CODES.search(visible), visible
    shot(page, f"readable-story-desktop-{backend}")
    page.set_viewport_size(PHONE)
    shot(page, f"readable-story-phone-{backend}")
    page.click("#side-close")
    shot(page, f"readable-chat-phone-{backend}")
