"""Engine and session factory for SQLite (embedded) and PostgreSQL (production)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

SQLITE_BUSY_TIMEOUT_MS = 10_000


def _json_dumps(value: Any) -> str:
    return msgspec.json.encode(value).decode()


# JSON columns (message metadata, turn results, events) through msgspec: several times faster
# than the stdlib's json on the large orchestration records every turn writes.
JSON_CODEC: dict[str, Any] = {"json_serializer": _json_dumps, "json_deserializer": msgspec.json.decode}


def _sqlite_pragmas(dbapi_conn, _record) -> None:  # noqa: ANN001 - DBAPI objects
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def create_engine(url: str, *, pool_size: int = 10) -> AsyncEngine:
    """Create the async engine. SQLite gets WAL, foreign keys and a busy timeout on every
    connection, so concurrent writers queue instead of failing with ``database is locked``."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}, **JSON_CODEC)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    return create_async_engine(url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True, **JSON_CODEC)


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)
