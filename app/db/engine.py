"""Engine and session factory for SQLite (embedded) and PostgreSQL (production)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from app.db.sqlite_driver import one_hop_dbapi

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


def _sqlite_reset(dbapi_conn, _record, state) -> None:  # noqa: ANN001 - DBAPI objects
    """Roll back a connection coming back to the pool only if it is inside a transaction.

    The pool's default reset rolls back on every return, also after a commit and after a
    read-only session (pysqlite opens a transaction only before a write): each is a round trip
    to aiosqlite's thread, about ten per turn. ``in_transaction`` is SQLite's own autocommit flag,
    read without that round trip."""
    if state.terminate_only or not state.asyncio_safe or state.transaction_was_reset:
        return
    driver = getattr(dbapi_conn, "_connection", None)
    if getattr(driver, "in_transaction", True):
        dbapi_conn.rollback()


def create_engine(url: str, *, pool_size: int = 10) -> AsyncEngine:
    """Create the async engine. SQLite gets WAL, foreign keys and a busy timeout on every
    connection, so concurrent writers queue instead of failing with ``database is locked``, and
    one thread round trip per statement (``app.db.sqlite_driver``)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        extra = {"module": one_hop_dbapi()} if parsed.get_driver_name() == "aiosqlite" else {}
        engine = create_async_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
                                     pool_reset_on_return=None, **JSON_CODEC, **extra)  # fmt: skip
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        event.listen(engine.sync_engine.pool, "reset", _sqlite_reset)
        return engine
    return create_async_engine(url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True, **JSON_CODEC)


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions whose writes are fenced while a turn runs (``app.db.fence``)."""
    from app.db import fence

    fence.install()
    return async_sessionmaker(engine, expire_on_commit=False)
