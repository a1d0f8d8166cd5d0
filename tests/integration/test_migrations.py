from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from app.db.engine import create_engine
from app.db.migrate import current_revision, downgrade, head_revision, is_at_head, upgrade
from app.db.models import Base


async def _diff(url: str) -> list:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            return await conn.run_sync(
                lambda sync: compare_metadata(MigrationContext.configure(sync, opts={"compare_type": True}), Base.metadata)
            )
    finally:
        await engine.dispose()


async def test_upgrade_head_on_empty_database_matches_models(empty_db_url: str) -> None:
    await upgrade(empty_db_url)
    assert await _diff(empty_db_url) == []
    engine = create_engine(empty_db_url)
    try:
        assert await current_revision(engine) == head_revision()
    finally:
        await engine.dispose()


async def test_downgrade_to_base_then_upgrade_again(empty_db_url: str) -> None:
    await upgrade(empty_db_url)
    await downgrade(empty_db_url, "base")
    engine = create_engine(empty_db_url)
    try:
        assert await current_revision(engine) is None
        assert not await is_at_head(engine)
        await upgrade(empty_db_url)
        assert await is_at_head(engine)
    finally:
        await engine.dispose()
    assert await _diff(empty_db_url) == []


async def test_sqlite_connections_use_wal_foreign_keys_and_busy_timeout(tmp_path) -> None:
    from sqlalchemy import text

    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'p.db'}")
    try:
        async with engine.connect() as conn:
            assert (await conn.execute(text("PRAGMA journal_mode"))).scalar() == "wal"
            assert (await conn.execute(text("PRAGMA foreign_keys"))).scalar() == 1
            assert (await conn.execute(text("PRAGMA busy_timeout"))).scalar() >= 5000
    finally:
        await engine.dispose()
