"""Analytics for admins in a real browser: the queries as tables, charts, the CSV download."""

from __future__ import annotations

import httpx
import pytest

from tests.browser.conftest import PHONE, shot, token

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]' (playwright)").expect


def test_admin_sees_tables_and_charts_and_downloads_the_csv(page, server: str, backend: str) -> None:
    admin = {"Authorization": f"Bearer {token('root', admin=True)}"}
    carol = {"Authorization": f"Bearer {token('carol')}"}
    ids = [httpx.post(f"{server}/v1/agents", json={"name": n}, headers=admin).json()["id"] for n in ("Ann", "Bo")]
    conv = httpx.post(f"{server}/v1/conversations", json={"kind": "group", "agentIds": ids, "settings": {"language": "en"}},
                      headers=carol).json()  # fmt: skip
    turn = httpx.post(f"{server}/v1/conversations/{conv['id']}/turns", json={"content": "hello both"}, headers=carol, timeout=60)
    assert turn.status_code == 201, turn.text

    page.goto("/")
    page.fill("#token-input", token("root", admin=True))
    page.click("#token-submit")
    page.click("nav >> text=Analytics")
    expect(page.locator("[data-query='speaking-share'] table")).to_contain_text("Ann")
    expect(page.locator("svg.chart").first).to_be_visible()
    shot(page, f"analytics-desktop-{backend}")
    with page.expect_download() as download:
        page.click("#download-csv")
    assert download.value.suggested_filename == "decisions.csv"
    assert open(download.value.path(), encoding="utf-8").readline().startswith("turn_id,")
    page.set_viewport_size(PHONE)
    shot(page, f"analytics-phone-{backend}")
