"""HTTP-level fixtures: the real Litestar app on a real database, with a fake model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from app.auth.tokens import issue_token
from app.main import create_app
from app.settings import Settings, load_settings

SECRET = "test-secret-0123456789abcdef-0123456789"


def make_settings(db_url: str, data_dir: Path, **env: str) -> Settings:
    base = {"COMPANION_DATA_DIR": str(data_dir), "COMPANION_DATABASE_URL": db_url, "COMPANION_JWT_SECRET": SECRET}
    return load_settings({**base, **env})


def bearer(user: str, *, admin: bool = False, ttl_s: int = 3600, now: float | None = None) -> dict[str, str]:
    return {"Authorization": f"Bearer {issue_token(SECRET, user, admin=admin, ttl_s=ttl_s, now=now)}"}


ADMIN = bearer("root", admin=True)
ALICE = bearer("alice")
BOB = bearer("bob")


class Api:
    """A test client plus helpers that create the usual fixtures over HTTP."""

    def __init__(self, client: AsyncTestClient, settings: Settings) -> None:
        self.client = client
        self.settings = settings

    async def agent(self, name: str, **fields: Any) -> dict[str, Any]:
        resp = await self.client.post("/v1/agents", json={"name": name, **fields}, headers=ADMIN)
        assert resp.status_code == 201, resp.text
        return resp.json()

    async def group(self, *agent_ids: str, user: dict[str, str] = ALICE, **fields: Any) -> dict[str, Any]:
        body = {"kind": "group", "agentIds": list(agent_ids), **fields}
        resp = await self.client.post("/v1/conversations", json=body, headers=user)
        assert resp.status_code == 201, resp.text
        return resp.json()


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return make_settings(db_url, tmp_path)


@pytest.fixture
def model() -> Any:
    from app.llm.fakes import ScriptedModel

    return ScriptedModel()


@pytest.fixture
async def api(settings: Settings, model: Any) -> AsyncIterator[Api]:
    app = create_app(settings, model=model)
    async with AsyncTestClient(app) as client:
        yield Api(client, settings)
