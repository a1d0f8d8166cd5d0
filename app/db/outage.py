"""Telling "the database is not there (or cannot write)" apart from a bug.

An unreachable PostgreSQL, a read-only or full disk, a SQLite file that cannot be written: the
request was fine and will work again later, so the client gets a 503 ``database_unavailable``
with ``retryable: true`` and a ``Retry-After``, never a 500 ``internal_error``. ``reason`` says
which of the three it is, from the driver's error (SQLSTATE class on PostgreSQL, the SQLite
message otherwise).
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Any

from sqlalchemy import exc as sa_exc

from app.errors import AppError

RETRY_AFTER_S = 2
# SQLSTATE: 08 connection exception, 53 insufficient resources (53100 disk full), 57P operator
# intervention (shutdown, cannot connect now), 25006 read-only transaction, 58 system error.
_PG_UNAVAILABLE = ("08", "53", "57P", "25006", "58")
_SQLITE_HINTS = {
    "readonly": "read_only", "read-only": "read_only", "disk is full": "disk_full", "disk i/o": "disk_error",
    "unable to open": "unreachable", "database is locked": "busy",
}  # fmt: skip
_NET_ERRNOS = {errno.ECONNREFUSED, errno.ECONNRESET, errno.EHOSTUNREACH, errno.ENETUNREACH, errno.ETIMEDOUT,
               errno.EPIPE, errno.ECONNABORTED}  # fmt: skip


class DatabaseUnavailable(AppError):
    status_code = 503
    code = "database_unavailable"

    def __init__(self, reason: str) -> None:
        super().__init__(f"the database is unavailable ({reason.replace('_', ' ')}); retry shortly",
                         details={"reason": reason, "retryAfterS": RETRY_AFTER_S})  # fmt: skip
        self.retryable = True


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen and len(seen) < 8:
        seen.append(exc)
        orig = getattr(exc, "orig", None)
        exc = orig if isinstance(orig, BaseException) else (exc.__cause__ or exc.__context__)  # type: ignore[assignment]
    return seen


def outage_reason(exc: BaseException) -> str | None:
    """Why ``exc`` means the database is unavailable, or None if it is something else."""
    for item in _chain(exc):
        state = getattr(item, "sqlstate", None) or getattr(item, "pgcode", None)
        if isinstance(state, str) and state:
            if state == "25006":
                return "read_only"
            if state.startswith("53"):
                return "disk_full" if state == "53100" else "out_of_resources"
            if state.startswith(_PG_UNAVAILABLE):
                return "unreachable"
        text = str(item).lower()
        if type(item).__module__.startswith(("sqlite3", "aiosqlite")) or "sqlite" in type(item).__module__:
            for hint, reason in _SQLITE_HINTS.items():
                if hint in text:
                    return reason
        if isinstance(item, sa_exc.DBAPIError) and item.connection_invalidated:
            return "unreachable"
        if isinstance(item, sa_exc.TimeoutError):  # the pool had no connection to give
            return "busy"
        if isinstance(item, ConnectionError) or (isinstance(item, OSError) and item.errno in _NET_ERRNOS):
            return "unreachable"
        if type(item).__name__ in ("ConnectionDoesNotExistError", "InterfaceError", "CannotConnectNowError",
                                   "ConnectionFailureError", "InternalClientError") and "asyncpg" in type(item).__module__:
            return "unreachable"  # fmt: skip
    return None


def as_unavailable(exc: BaseException) -> DatabaseUnavailable | None:
    reason = outage_reason(exc)
    return DatabaseUnavailable(reason) if reason is not None else None


MIN_FREE_BYTES = 16 * 1024 * 1024


async def cannot_write(engine: Any) -> str | None:
    """Why the database could not take a write now (``/readyz``), or None: a read-only or full
    SQLite file or directory, or a PostgreSQL server in read-only mode (a standby)."""
    url = engine.url
    if url.get_backend_name() == "sqlite":
        if not url.database or url.database == ":memory:":
            return None
        path = Path(url.database)
        if (path.exists() and not os.access(path, os.W_OK)) or not os.access(path.parent, os.W_OK):
            return "read_only"
        if shutil.disk_usage(path.parent).free < MIN_FREE_BYTES:
            return "disk_full"
        return None
    async with engine.connect() as conn:
        if (await conn.exec_driver_sql("SHOW transaction_read_only")).scalar() == "on":
            return "read_only"
    return None
