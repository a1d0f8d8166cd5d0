"""Programmatic Alembic: upgrade, downgrade and "is the database at head?" checks.

Alembic's commands are synchronous; the async entry points run them in a worker thread (the
env.py opens its own event loop) so they can be called from a running server or test loop.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.ext.asyncio import AsyncEngine

import migrations

MIGRATIONS_DIR = Path(migrations.__file__).parent


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def head_revision(url: str = "sqlite+aiosqlite://") -> str | None:
    return ScriptDirectory.from_config(alembic_config(url)).get_current_head()


def upgrade_sync(url: str, target: str = "head") -> None:
    command.upgrade(alembic_config(url), target)


def downgrade_sync(url: str, target: str) -> None:
    command.downgrade(alembic_config(url), target)


async def upgrade(url: str, target: str = "head") -> None:
    await asyncio.to_thread(upgrade_sync, url, target)


async def downgrade(url: str, target: str) -> None:
    await asyncio.to_thread(downgrade_sync, url, target)


async def current_revision(engine: AsyncEngine) -> str | None:
    def _read(sync_conn) -> str | None:  # noqa: ANN001
        return MigrationContext.configure(sync_conn).get_current_revision()

    async with engine.connect() as conn:
        return await conn.run_sync(_read)


async def is_at_head(engine: AsyncEngine) -> bool:
    return await current_revision(engine) == head_revision()
