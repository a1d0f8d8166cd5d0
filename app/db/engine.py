"""Engine and session factory for SQLite (embedded) and PostgreSQL (production)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import msgspec
from sqlalchemy import event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from app.db.sqlite_driver import one_hop_dbapi

SQLITE_BUSY_TIMEOUT_MS = 10_000
IDLE_PING_S = 5.0  # PostgreSQL: a connection idle longer than this is pinged before use


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


def _stamp_checkin(_dbapi_conn, record) -> None:  # noqa: ANN001 - DBAPI objects
    record.info["idle_since"] = time.monotonic()


def _ping_if_idle(engine: AsyncEngine):  # noqa: ANN202 - a pool listener
    """Ping a pooled PostgreSQL connection before use only when it sat idle more than
    ``IDLE_PING_S``: one a turn used a moment ago is live. SQLAlchemy's ``pool_pre_ping`` pings
    on every checkout, and asyncpg's ping outside a transaction is three round trips (BEGIN, a
    query, ROLLBACK): twelve before a named agent's first model call, over four sessions. A
    database restarted while idle still costs no request (the idle connections are pinged, the
    dead ones replaced, the pool's older ones invalidated); a restart within seconds of use costs
    the next request on a dead connection a 503 ``database_unavailable`` (retryable), which also
    invalidates the pool."""
    dialect = engine.sync_engine.dialect

    def checkout(dbapi_conn, record, _proxy) -> None:  # noqa: ANN001 - DBAPI objects
        since = record.info.get("idle_since")
        if since is None or time.monotonic() - since <= IDLE_PING_S:
            return  # fresh from connect, or used a moment ago
        try:
            dialect.do_ping(dbapi_conn)
        except Exception as exc:  # noqa: BLE001 - any failed ping means this connection is gone
            raise sa_exc.InvalidatePoolError(f"idle connection failed its ping: {exc}") from exc

    return checkout


def create_engine(url: str, *, pool_size: int = 10) -> AsyncEngine:
    """Create the async engine. SQLite gets WAL, foreign keys and a busy timeout on every
    connection, so concurrent writers queue instead of failing with ``database is locked``, and
    one thread round trip per statement (``app.db.sqlite_driver``). PostgreSQL's pooled
    connections are pinged only after ``IDLE_PING_S`` idle (``_ping_if_idle``)."""
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
    engine = create_async_engine(url, pool_size=pool_size, max_overflow=pool_size, **JSON_CODEC)
    event.listen(engine.sync_engine.pool, "checkin", _stamp_checkin)
    event.listen(engine.sync_engine.pool, "checkout", _ping_if_idle(engine))
    return engine


async def reads_only(session: AsyncSession) -> AsyncSession:
    """``session``, before its first statement, made a reader that opens no transaction on
    PostgreSQL: no BEGIN and no ROLLBACK around its queries (two of asyncpg's round trips). Each
    query sees what was committed when it ran, as it does inside a READ COMMITTED transaction
    (PostgreSQL's default); SQLite's driver opens no transaction for reads anyway. Only for a
    session that never writes: a write in it would commit at once."""
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        await session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
    return session


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions whose writes are fenced while a turn runs (``app.db.fence``)."""
    from app.db import fence

    fence.install()
    return async_sessionmaker(engine, expire_on_commit=False)
