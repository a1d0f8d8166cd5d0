"""PostgreSQL connections are pinged before use only after sitting idle (``IDLE_PING_S``): a
connection the database dropped while idle is replaced without failing the request; one used a
moment ago is not pinged (asyncpg's ping is three round trips)."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from app.db import engine as engine_module
from app.db.engine import create_engine
from app.db.outage import outage_reason


@pytest.fixture
async def pg(postgres_url: str):  # noqa: ANN201
    eng = create_engine(postgres_url)
    yield eng
    await eng.dispose()


async def _backend_pid(eng) -> int:  # noqa: ANN001
    async with eng.connect() as conn:
        return int((await conn.execute(text("SELECT pg_backend_pid()"))).scalar_one())


async def _kill(url: str, pid: int) -> None:
    other = create_engine(url)
    try:
        async with other.connect() as conn:
            await conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    finally:
        await other.dispose()


def _count_pings(eng) -> list[int]:  # noqa: ANN001
    pings = [0]
    original = eng.sync_engine.dialect.do_ping

    def counted(dbapi_conn):  # noqa: ANN001, ANN202
        pings[0] += 1
        return original(dbapi_conn)

    eng.sync_engine.dialect.do_ping = counted
    return pings


async def test_a_connection_used_a_moment_ago_is_not_pinged(pg) -> None:  # noqa: ANN001
    pings = _count_pings(pg)
    for _ in range(3):
        await _backend_pid(pg)
    assert pings[0] == 0


async def test_an_idle_connection_the_database_dropped_is_replaced_without_a_failed_request(
    pg, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:  # noqa: ANN001
    pid = await _backend_pid(pg)
    await _kill(postgres_url, pid)
    monkeypatch.setattr(engine_module, "IDLE_PING_S", 0.0)  # every pooled connection counts as idle
    pings = _count_pings(pg)
    assert await _backend_pid(pg) != pid  # the dead one was pinged, invalidated and replaced
    assert pings[0] == 1


async def test_a_connection_dropped_right_after_use_fails_one_request_as_an_outage_then_recovers(
    pg, postgres_url: str
) -> None:  # noqa: ANN001
    pid = await _backend_pid(pg)
    await _kill(postgres_url, pid)
    with pytest.raises(Exception) as failed:
        await _backend_pid(pg)
    assert outage_reason(failed.value) is not None, failed.value  # a 503 database_unavailable, not a 500
    assert await _backend_pid(pg) != pid
