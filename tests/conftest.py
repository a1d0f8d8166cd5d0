"""Shared fixtures: every database test runs on SQLite and, when
``COMPANION_TEST_POSTGRES_URL`` is set, on PostgreSQL too.

PostgreSQL: one throw-away database per test run (created from the given URL's server, migrated
once, truncated between tests, dropped at the end). If the URL is set but the server is not
reachable the PostgreSQL tests *fail*: CI must never go green by skipping them.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from app.db.engine import create_engine
from app.db.migrate import upgrade_sync
from app.db.models import Base

PG_ENV = "COMPANION_TEST_POSTGRES_URL"
BACKENDS = ["sqlite", "postgres"]


def pytest_configure(config: pytest.Config) -> None:
    from app.llm.fakes import block_network_models

    config._companion_guard = block_network_models()  # type: ignore[attr-defined]
    config._companion_guard.__enter__()  # type: ignore[attr-defined]


def pytest_unconfigure(config: pytest.Config) -> None:
    guard = getattr(config, "_companion_guard", None)
    if guard is not None:
        guard.__exit__(None, None, None)


async def _admin_exec(url: str, sql: str) -> None:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            await conn.execute(text(sql))
    finally:
        await engine.dispose()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file copied for each test (migrating per test would be slow)."""
    path = tmp_path_factory.mktemp("sqlite-template") / "template.db"
    upgrade_sync(f"sqlite+aiosqlite:///{path}")
    return path


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    base = os.environ.get(PG_ENV)
    if not base:
        pytest.skip(f"PostgreSQL variant skipped: set {PG_ENV}=postgresql+asyncpg://user@host:5432/db to run it")
    name = f"companion_test_{uuid.uuid4().hex[:10]}"
    try:
        asyncio.run(_admin_exec(base, f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"{PG_ENV} is set but PostgreSQL is unreachable ({type(exc).__name__}: {exc})", pytrace=False)
    url = make_url(base).set(database=name).render_as_string(hide_password=False)
    upgrade_sync(url)
    yield url
    asyncio.run(_admin_exec(base, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def _truncate(url: str) -> None:
    tables = ", ".join(f'"{t.name}"' for t in Base.metadata.sorted_tables)
    await _admin_exec(url, f"TRUNCATE {tables} RESTART IDENTITY CASCADE")


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path, sqlite_template: Path) -> str:
    """A migrated, empty database URL: SQLite file or PostgreSQL database."""
    if request.param == "sqlite":
        path = tmp_path / "test.db"
        shutil.copyfile(sqlite_template, path)
        return f"sqlite+aiosqlite:///{path}"
    url = request.getfixturevalue("postgres_url")
    asyncio.run(_truncate(url))
    return url


@pytest.fixture
async def engine(db_url: str) -> AsyncIterator:
    eng = create_engine(db_url)
    yield eng
    await eng.dispose()


@pytest.fixture(params=BACKENDS)
def empty_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A brand-new, unmigrated database (for migration tests)."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}"
        return
    base = os.environ.get(PG_ENV)
    if not base:
        pytest.skip(f"PostgreSQL variant skipped: set {PG_ENV} to run it")
    name = f"companion_empty_{uuid.uuid4().hex[:10]}"
    try:
        asyncio.run(_admin_exec(base, f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"{PG_ENV} is set but PostgreSQL is unreachable ({type(exc).__name__}: {exc})", pytrace=False)
    yield make_url(base).set(database=name).render_as_string(hide_password=False)
    asyncio.run(_admin_exec(base, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
