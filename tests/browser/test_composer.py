"""The composer under real hands (issue 29): a paste over the message limit is kept whole, counted
and not sent (the browser used to cut it to 4,000 characters without a word), and the box grows
with its text up to a third of the window."""

from __future__ import annotations

import httpx
import pytest

from tests.browser.conftest import PHONE, shot
from tests.browser.test_daily_use import auth, new_direct_chat, open_chat

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]' (playwright)").expect


def box_height(page) -> float:
    return page.locator("#composer-input").evaluate("e => e.getBoundingClientRect().height")


def test_an_over_limit_paste_is_kept_counted_and_not_sent_and_the_composer_grows(page, server: str) -> None:
    conv = new_direct_chat(server, "paster", "Listener")
    open_chat(page, "paster", conv)
    one_line = box_height(page)
    page.fill("#composer-input", "\n".join(f"line {i}" for i in range(1, 6)))
    five_lines = box_height(page)
    assert five_lines > one_line * 2, (one_line, five_lines)  # it grew with the text
    page.fill("#composer-input", "\n".join(f"line {i}" for i in range(1, 200)))
    assert box_height(page) <= 800 / 3 + 4  # then it scrolls

    page.fill("#composer-input", "x" * 5000)  # a paste over the limit
    assert page.locator("#composer-input").evaluate("e => e.value.length") == 5000  # not cut
    expect(page.locator("#composer-count")).to_be_visible()
    expect(page.locator("#composer-count")).to_contain_text("too long to send")
    expect(page.locator("#composer-count")).to_contain_text("1,000")
    expect(page.locator("#send")).to_be_disabled()
    page.press("#composer-input", "Enter")
    expect(page.locator("#turn-status")).to_contain_text("Too long to send")
    shot(page, "composer-over-limit-desktop")
    page.set_viewport_size(PHONE)
    shot(page, "composer-over-limit-phone")
    page.wait_for_timeout(200)
    messages = httpx.get(f"{server}/v1/conversations/{conv['id']}/messages", headers=auth("paster")).json()["items"]
    assert messages == []  # nothing was sent

    page.fill("#composer-input", "y" * 3999)  # within the limit: the count stays, Send is back
    expect(page.locator("#composer-count")).not_to_have_class("composer-count bad")
    expect(page.locator("#send")).to_be_enabled()
