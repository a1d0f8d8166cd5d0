"""``companion serve`` serves the client and its config; dev tokens are off unless switched on;
the analytics downloads are for admins. Plain HTTP, no browser: runs on both databases."""

from __future__ import annotations

from pathlib import Path

import pytest
from litestar.testing import AsyncTestClient

from app.errors import SettingsError
from app.main import create_app
from tests.integration.conftest import ADMIN, ALICE, make_settings


async def test_the_page_and_its_assets_are_served(db_url: str, tmp_path: Path) -> None:
    async with AsyncTestClient(create_app(make_settings(db_url, tmp_path))) as client:
        page = await client.get("/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert '<script type="module" src="/web/js/app.js">' in page.text
        for asset in ("/web/app.css", "/web/js/app.js", "/web/js/api.js", "/web/js/chat.js", "/web/js/why.js"):
            assert (await client.get(asset)).status_code == 200, asset
        assert (await client.get("/web/config.json")).json()["devTokens"] is False


async def test_dev_tokens_are_off_by_default(db_url: str, tmp_path: Path) -> None:
    async with AsyncTestClient(create_app(make_settings(db_url, tmp_path))) as client:
        resp = await client.post("/v1/dev/token", json={"user": "alice"})
        assert resp.status_code == 404


async def test_a_dev_token_works_when_switched_on(db_url: str, tmp_path: Path) -> None:
    settings = make_settings(db_url, tmp_path, COMPANION_DEV_TOKENS="true")
    async with AsyncTestClient(create_app(settings)) as client:
        assert (await client.get("/web/config.json")).json()["devTokens"] is True
        out = (await client.post("/v1/dev/token", json={"user": "dana", "admin": True})).json()
        assert out["user"] == "dana" and out["admin"] is True
        assert (await client.get("/v1/analytics", headers={"Authorization": f"Bearer {out['token']}"})).status_code == 200
        assert (await client.post("/v1/dev/token", json={"user": "bad name!"})).status_code in (400, 422)


async def test_the_downloads_are_for_admins(db_url: str, tmp_path: Path) -> None:
    async with AsyncTestClient(create_app(make_settings(db_url, tmp_path))) as client:
        assert (await client.get("/v1/reports/decisions.csv", headers=ALICE)).status_code == 403
        csv = await client.get("/v1/reports/decisions.csv?since=30d", headers=ADMIN)
        assert csv.status_code == 200 and csv.text.startswith("turn_id,")
        assert (await client.get("/v1/reports/decisions.csv?since=nonsense", headers=ADMIN)).status_code == 422


def test_the_dev_tokens_setting_is_a_boolean(tmp_path: Path) -> None:
    assert make_settings("sqlite+aiosqlite:///x.db", tmp_path).dev_tokens is False
    assert make_settings("sqlite+aiosqlite:///x.db", tmp_path, COMPANION_DEV_TOKENS="on").dev_tokens is True
    with pytest.raises(SettingsError, match="COMPANION_DEV_TOKENS"):
        make_settings("sqlite+aiosqlite:///x.db", tmp_path, COMPANION_DEV_TOKENS="maybe")
