"""SQLAlchemy's aiosqlite adapter with one thread round trip per statement.

aiosqlite runs every sqlite3 call on its own thread; SQLAlchemy's adapter makes a round trip for
each step of a statement: open a cursor, execute, fetch the rows, close the cursor (three or
four hand-offs, about 45 µs of CPU each on the dev machine, 60 or so per turn). This adapter
does the four steps in one function on aiosqlite's thread (``Connection._execute``, the same
queue SQLAlchemy's adapter already reaches into for ``isolation_level``) and keeps the rows,
``description``, ``rowcount`` and ``lastrowid`` it read there. Everything else — transactions,
server-side cursors, errors, the pool — is SQLAlchemy's adapter unchanged.

Use: ``create_async_engine("sqlite+aiosqlite://…", module=one_hop_dbapi())``.
"""

from __future__ import annotations

import collections
from typing import Any

from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection, AsyncAdapt_aiosqlite_cursor, AsyncAdapt_aiosqlite_dbapi,
)
from sqlalchemy.util import EMPTY_DICT
from sqlalchemy.util.concurrency import await_


def _run(conn: Any, operation: Any, parameters: Any, many: bool) -> tuple[Any, list[Any] | None, int, Any]:
    """On aiosqlite's thread: the whole statement, on a cursor that does not outlive it."""
    cursor = conn.cursor()
    try:
        if many:
            cursor.executemany(operation, parameters)
        elif parameters is None:
            cursor.execute(operation)
        else:
            cursor.execute(operation, parameters)
        description = cursor.description
        rows = cursor.fetchall() if description else None
        return description, rows, cursor.rowcount, cursor.lastrowid
    finally:
        cursor.close()


class OneHopCursor(AsyncAdapt_aiosqlite_cursor):
    __slots__ = ("_description", "_rowcount", "_lastrowid")

    def __init__(self, adapt_connection: Any) -> None:  # no driver cursor up front: no round trip
        self._adapt_connection = adapt_connection
        self._connection = adapt_connection._connection
        self._cursor = None
        self._soft_closed_memoized = EMPTY_DICT
        self._rows = collections.deque()
        self._description: Any = None
        self._rowcount = -1
        self._lastrowid: Any = None

    @property
    def description(self) -> Any:
        return self._description

    @property
    def rowcount(self) -> int:
        return self._rowcount

    @property
    def lastrowid(self) -> Any:
        return self._lastrowid

    def execute(self, operation: Any, parameters: Any = None) -> Any:
        try:
            return await_(self._execute_async(operation, parameters))
        except Exception as error:
            self._adapt_connection._handle_exception(error)

    def executemany(self, operation: Any, seq_of_parameters: Any) -> Any:
        try:
            return await_(self._executemany_async(operation, seq_of_parameters))
        except Exception as error:
            self._adapt_connection._handle_exception(error)

    async def _execute_async(self, operation: Any, parameters: Any) -> Any:
        return await self._one_hop(operation, parameters, False)

    async def _executemany_async(self, operation: Any, seq_of_parameters: Any) -> Any:
        return await self._one_hop(operation, seq_of_parameters, True)

    async def _one_hop(self, operation: Any, parameters: Any, many: bool) -> None:
        driver = self._connection  # the aiosqlite Connection
        async with self._adapt_connection._execute_mutex:
            desc, rows, self._rowcount, self._lastrowid = await driver._execute(
                _run, driver._conn, operation, parameters, many)  # fmt: skip
        self._description = desc
        self._rows = collections.deque(rows) if rows else collections.deque()

    async def _async_soft_close(self) -> None:
        return None  # the driver cursor is already closed; the rows are kept

    def close(self) -> None:
        self._rows.clear()


class OneHopConnection(AsyncAdapt_aiosqlite_connection):
    __slots__ = ()
    _cursor_cls = OneHopCursor


class OneHopDBAPI(AsyncAdapt_aiosqlite_dbapi):
    def connect(self, *arg: Any, **kw: Any) -> OneHopConnection:
        adapted = super().connect(*arg, **kw)
        return OneHopConnection(self, adapted._connection)


def one_hop_dbapi() -> OneHopDBAPI:
    import sqlite3

    import aiosqlite

    return OneHopDBAPI(aiosqlite, sqlite3)
