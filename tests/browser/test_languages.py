"""The UI in Chinese and English (issue 29): it follows the browser's language, and the top bar's
switch changes it (kept across reloads); messages and names are never translated."""

from __future__ import annotations

import pytest

from tests.browser.conftest import DESKTOP, PHONE, shot
from tests.browser.test_daily_use import new_direct_chat

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]' (playwright)").expect


def test_the_ui_follows_the_browser_language_and_the_switch(browser, server: str, backend: str) -> None:
    conv = new_direct_chat(server, "lingua", "Lin")
    context = browser.new_context(viewport=DESKTOP, base_url=server, locale="zh-CN")
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto("/")
        expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
        expect(page.locator("#token-submit")).to_have_text("登录")
        page.fill("#dev-user", "lingua")
        page.click("#dev-token")
        expect(page.locator('#nav a[data-nav="chat"]')).to_have_text("聊天")
        expect(page.locator("#sign-out")).to_have_text("退出登录")
        page.goto(f"/#/c/{conv['id']}")
        expect(page.locator("#send")).to_have_text("发送")
        expect(page.locator("#composer-input")).to_have_attribute("placeholder", "输入消息（提到名字即可点名）")
        page.fill("#composer-input", "hello there")
        page.click("#send")
        expect(page.locator(".msg.agent:not(.draft)")).to_have_count(1)
        expect(page.locator(".msg.user .text")).to_have_text(["hello there"])  # the message itself is as typed
        expect(page.locator(".trace .trace-who")).to_have_text("Lin回复")
        expect(page.locator(".trace .trace-selection")).to_be_hidden()  # the codes stay under "详情"
        page.locator(".msg.agent .why-btn").first.click()
        expect(page.locator("#why-panel h2")).to_have_text("为什么是Lin回复")
        page.click("#settings-btn")
        expect(page.locator("#settings-panel h2")).to_have_text("会话设置")
        shot(page, f"chinese-ui-desktop-{backend}")
        page.set_viewport_size(PHONE)
        shot(page, f"chinese-ui-phone-{backend}")
        page.set_viewport_size(DESKTOP)

        page.select_option("#lang-select", "en")  # the switch: English, kept after a reload
        expect(page.locator("#send")).to_have_text("Send")
        expect(page.locator("html")).to_have_attribute("lang", "en")
        page.reload()
        expect(page.locator("#send")).to_have_text("Send")
        expect(page.locator('#nav a[data-nav="chat"]')).to_have_text("Chat")
    finally:
        context.close()
    assert not errors, errors


def test_an_english_browser_gets_english(page, server: str) -> None:
    page.goto("/")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.locator("#token-submit")).to_have_text("Sign in")
