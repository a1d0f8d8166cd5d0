"""A connection back in the pool never carries an open transaction. (SQLite skips the reset's
round trip to aiosqlite's thread when SQLite itself says no transaction is open.)"""

from __future__ import annotations

import pytest
from sqlalchemy import text


async def _count(engine) -> int:  # noqa: ANN001
    async with engine.connect() as conn:
        return int((await conn.execute(text("SELECT count(*) FROM pool_probe"))).scalar_one())


@pytest.fixture
async def probe(engine):  # noqa: ANN001, ANN201
    async with engine.begin() as conn:
        await conn.execute(text("CREATE TABLE IF NOT EXISTS pool_probe (x INTEGER)"))
    yield engine
    async with engine.begin() as conn:
        await conn.execute(text("DROP TABLE pool_probe"))


async def test_a_driver_level_write_left_open_is_rolled_back_on_return_to_the_pool(probe) -> None:  # noqa: ANN001
    if probe.dialect.name != "sqlite":
        pytest.skip("the in_transaction reset is SQLite's; PostgreSQL keeps SQLAlchemy's rollback-on-return")
    conn = await probe.connect()
    raw = await conn.get_raw_connection()
    await raw.driver_connection.execute("INSERT INTO pool_probe (x) VALUES (1)")  # behind SQLAlchemy's back
    assert raw.driver_connection.in_transaction
    await conn.close()
    assert await _count(probe) == 0
    async with probe.begin() as conn:  # and the write lock is free
        await conn.execute(text("INSERT INTO pool_probe (x) VALUES (2)"))
    assert await _count(probe) == 1


async def test_a_failed_transaction_is_rolled_back_and_a_committed_one_kept(probe) -> None:  # noqa: ANN001
    with pytest.raises(RuntimeError):
        async with probe.begin() as conn:
            await conn.execute(text("INSERT INTO pool_probe (x) VALUES (1)"))
            raise RuntimeError("boom")
    async with probe.begin() as conn:
        await conn.execute(text("INSERT INTO pool_probe (x) VALUES (2)"))
    assert await _count(probe) == 1
