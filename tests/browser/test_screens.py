"""Every main screen at desktop and phone width (issue 29): sign-in, the conversation list, a new
conversation, the agents; screenshots for reviewers, and nothing wider than a phone's screen."""

from __future__ import annotations

import pytest

from tests.browser.conftest import DESKTOP, PHONE, shot, token

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]' (playwright)").expect


def no_sideways_scroll(page) -> None:
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= page.viewport_size["width"], width


def test_the_main_screens_fit_a_phone_and_a_desktop(page, server: str, backend: str) -> None:
    for size, label in ((PHONE, "phone"), (DESKTOP, "desktop")):
        page.set_viewport_size(size)
        page.goto("/")
        expect(page.locator("#token-submit")).to_be_visible()
        no_sideways_scroll(page)
        shot(page, f"screen-sign-in-{label}-{backend}")
        page.fill("#token-input", token("screens", admin=True))
        page.click("#token-submit")
        expect(page.locator("#conv-list")).to_be_visible()  # on a phone: the list is open as a drawer
        no_sideways_scroll(page)
        shot(page, f"screen-conversations-{label}-{backend}")
        page.goto("/#/new")
        expect(page.locator("#conv-create")).to_be_visible()
        no_sideways_scroll(page)
        shot(page, f"screen-new-conversation-{label}-{backend}")
        page.goto("/#/agents")
        expect(page.locator("#agent-new")).to_be_visible()
        page.click("#agent-new")
        expect(page.locator("#agent-form")).to_be_visible()
        no_sideways_scroll(page)
        shot(page, f"screen-agents-{label}-{backend}")
        page.click("#sign-out")
