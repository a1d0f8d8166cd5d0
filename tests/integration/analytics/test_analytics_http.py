"""GET /v1/analytics/{query} on a small app with the production dependencies."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.datastructures import State
from litestar.di import Provide
from litestar.testing import AsyncTestClient

from app.analytics_api.controller import AnalyticsController
from app.api.deps import provide_principal, provide_session
from app.api.errors import EXCEPTION_HANDLERS
from app.auth.tokens import issue_token
from app.db.engine import create_engine, session_factory
from app.settings import load_settings

SECRET = "test-secret-0123456789abcdef-0123456789"
ADMIN = {"Authorization": f"Bearer {issue_token(SECRET, 'root', admin=True)}"}
ALICE = {"Authorization": f"Bearer {issue_token(SECRET, 'alice')}"}


@pytest.fixture
async def client(history: Any, db_url: str, tmp_path: Path) -> Any:
    settings = load_settings({"COMPANION_DATA_DIR": str(tmp_path), "COMPANION_DATABASE_URL": db_url,
                              "COMPANION_JWT_SECRET": SECRET})
    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        engine = create_engine(db_url)  # on the app's own event loop
        app.state.sessions = session_factory(engine)
        yield
        await engine.dispose()

    app = Litestar(
        route_handlers=[AnalyticsController],
        dependencies={"session": Provide(provide_session), "principal": Provide(provide_principal, sync_to_thread=False)},
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        state=State({"settings": settings}),
        lifespan=[lifespan],
    )
    async with AsyncTestClient(app) as c:
        yield c


async def test_admin_gets_query_rows_as_camel_case_json(client: Any) -> None:
    resp = await client.get("/v1/analytics/speaking-share", params={"since": "2026-01-11"}, headers=ADMIN)
    assert resp.status_code == 200, resp.text
    assert [(r["agentId"], r["candidateTurns"], r["selected"]) for r in resp.json()] == [("A", 3, 2), ("B", 2, 1), ("C", 1, 0)]


async def test_repeated_and_comma_separated_filters(client: Any) -> None:
    resp = await client.get("/v1/analytics/speaking-share?agent=A&agent=B&selectedBy=llm,fallback", headers=ADMIN)
    assert [(r["agentId"], r["candidateTurns"]) for r in resp.json()] == [("A", 3), ("B", 3)]


async def test_query_list_names_every_query(client: Any) -> None:
    resp = await client.get("/v1/analytics", headers=ADMIN)
    assert "llm-agreement" in {q["name"] for q in resp.json()}


async def test_non_admin_is_forbidden(client: Any) -> None:
    resp = await client.get("/v1/analytics/speaking-share", headers=ALICE)
    assert resp.status_code == 403 and resp.json()["code"] == "admin_required"


async def test_unknown_query_is_404_with_code(client: Any) -> None:
    resp = await client.get("/v1/analytics/who-is-best", headers=ADMIN)
    assert resp.status_code == 404 and resp.json()["code"] == "unknown_query"


@pytest.mark.parametrize("query", ["since=yesterday", "kind=party", "selectedBy=magic", "color=red"])
async def test_bad_filter_is_422_naming_the_parameter(client: Any, query: str) -> None:
    resp = await client.get(f"/v1/analytics/emotions?{query}", headers=ADMIN)
    assert resp.status_code == 422 and resp.json()["code"] == "invalid_filter"
    assert resp.json()["details"]["parameter"] == query.split("=")[0]
