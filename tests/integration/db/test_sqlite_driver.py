"""The SQLite adapter that runs a statement in one round trip to aiosqlite's thread
(``app.db.sqlite_driver``): the same rows, counts, ids and errors as SQLAlchemy's own adapter."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError, OperationalError

from app.db.engine import create_engine
from app.db.sqlite_driver import OneHopCursor


@pytest.fixture
async def sqlite(tmp_path):  # noqa: ANN001, ANN201
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'd.db'}")
    async with engine.begin() as conn:
        await conn.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, n INTEGER)"))
    yield engine
    await engine.dispose()


async def test_the_engine_uses_the_one_hop_cursor(sqlite) -> None:  # noqa: ANN001
    async with sqlite.connect() as conn:
        raw = await conn.get_raw_connection()
        assert isinstance(raw.dbapi_connection.cursor(), OneHopCursor)


async def test_rows_counts_ids_and_returning_match_the_statement(sqlite) -> None:  # noqa: ANN001
    async with sqlite.begin() as conn:
        res = await conn.execute(text("INSERT INTO t (name, n) VALUES ('a', 1)"))
        assert res.rowcount == 1 and res.lastrowid == 1
        await conn.execute(text("INSERT INTO t (name, n) VALUES (:name, :n)"), [{"name": "b", "n": 2}, {"name": "c", "n": 3}])
        assert (await conn.execute(text("UPDATE t SET n = n + 10 WHERE n >= 2"))).rowcount == 2
        ret = await conn.execute(text("INSERT INTO t (name, n) VALUES ('d', 4) RETURNING id, name"))
        assert [tuple(r) for r in ret] == [(4, "d")]
    async with sqlite.connect() as conn:
        rows = (await conn.execute(text("SELECT name, n FROM t ORDER BY id"))).all()
        assert [tuple(r) for r in rows] == [("a", 1), ("b", 12), ("c", 13), ("d", 4)]
        assert (await conn.execute(text("SELECT name FROM t WHERE n > 100"))).all() == []
        assert list((await conn.execute(text("SELECT name FROM t ORDER BY id"))).scalars()) == ["a", "b", "c", "d"]


async def test_errors_are_sqlalchemys_and_the_transaction_rolls_back(sqlite) -> None:  # noqa: ANN001
    with pytest.raises(IntegrityError):
        async with sqlite.begin() as conn:
            await conn.execute(text("INSERT INTO t (name) VALUES ('x')"))
            await conn.execute(text("INSERT INTO t (name) VALUES ('x')"))
    with pytest.raises(OperationalError):
        async with sqlite.connect() as conn:
            await conn.execute(text("SELECT nope FROM t"))
    async with sqlite.connect() as conn:
        assert (await conn.execute(text("SELECT count(*) FROM t"))).scalar_one() == 0


async def test_a_statement_is_one_round_trip_to_the_driver_thread(sqlite, monkeypatch) -> None:  # noqa: ANN001
    async with sqlite.connect() as conn:
        raw = await conn.get_raw_connection()
        driver = raw.driver_connection
        calls: list[str] = []
        original = driver._execute

        async def counting(fn, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
            calls.append(getattr(fn, "__name__", repr(fn)))
            return await original(fn, *args, **kwargs)

        monkeypatch.setattr(driver, "_execute", counting)
        await conn.execute(text("SELECT 1"))
        await conn.execute(text("INSERT INTO t (name) VALUES ('y') RETURNING id"))
        assert calls == ["_run", "_run"]  # SQLAlchemy's adapter: cursor, execute, fetchall, close each
        await conn.rollback()
