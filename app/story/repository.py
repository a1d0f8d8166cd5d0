"""Story state rows: read, create-if-missing, and compare-and-swap on ``revision``.

Every write is ``UPDATE ... WHERE id = :id AND revision = :expected`` and bumps the revision in
the same statement, so two writers that read the same revision cannot both win, across server
processes and on both databases: PostgreSQL re-checks the ``WHERE`` after the row lock, SQLite
serialises writers. Zero rows updated means someone else wrote first: ``StaleStateWrite``.
Creation is ``INSERT ... ON CONFLICT DO NOTHING`` on the scope's unique constraint, so two
first turns racing for a new scope both end up reading the one row.
"""

from __future__ import annotations

from typing import Any

import msgspec
from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import StoryState, utcnow
from app.errors import StaleStateWrite


class StoryScope(msgspec.Struct, frozen=True):
    owner_id: str
    conversation_id: str
    agent_id: str


class StoredState(msgspec.Struct, frozen=True):
    id: int
    revision: int
    status: str
    envelope: bytes | None
    quarantine: list[Any] = []
    last_outcome: dict[str, Any] | None = None
    updated_at: Any = None


def _stored(row: StoryState) -> StoredState:
    return StoredState(row.id, row.revision, row.status, row.envelope, list(row.quarantine or []),
                       row.last_outcome, row.updated_at)


def _scoped(scope: StoryScope) -> Any:
    return select(StoryState).where(
        StoryState.owner_id == scope.owner_id, StoryState.conversation_id == scope.conversation_id,
        StoryState.agent_id == scope.agent_id,
    )  # fmt: skip


async def read(session: AsyncSession, scope: StoryScope) -> StoredState | None:
    row = (await session.execute(_scoped(scope).execution_options(populate_existing=True))).scalar_one_or_none()
    return _stored(row) if row is not None else None


async def ensure(session: AsyncSession, scope: StoryScope) -> StoredState:
    """The scope's row, created empty (revision 0, no envelope) when missing. Commits."""
    found = await read(session, scope)
    if found is not None:
        return found
    values = {"owner_id": scope.owner_id, "conversation_id": scope.conversation_id, "agent_id": scope.agent_id,
              "revision": 0, "status": "empty", "envelope": None, "quarantine": [], "created_at": utcnow(),
              "updated_at": utcnow()}  # fmt: skip
    dialect = session.get_bind().dialect.name
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    stmt = insert(StoryState).values(**values).on_conflict_do_nothing(
        index_elements=["owner_id", "conversation_id", "agent_id"]
    )
    await session.execute(stmt)
    await session.commit()
    found = await read(session, scope)
    assert found is not None
    return found


async def compare_and_swap(
    session: AsyncSession,
    row_id: int,
    expected_revision: int,
    *,
    status: str,
    envelope: bytes | None | type[msgspec.UNSET] = msgspec.UNSET,  # type: ignore[valid-type]
    quarantine: list[Any] | None = None,
    last_outcome: dict[str, Any] | None = None,
) -> int:
    """Write when the row still has ``expected_revision``; returns the new revision. Commits."""
    values: dict[str, Any] = {"revision": StoryState.revision + 1, "status": status, "updated_at": utcnow()}
    if envelope is not msgspec.UNSET:
        values["envelope"] = envelope
    if quarantine is not None:
        values["quarantine"] = quarantine
    if last_outcome is not None:
        values["last_outcome"] = last_outcome
    result = await session.execute(
        update(StoryState)
        .where(StoryState.id == row_id, StoryState.revision == expected_revision)
        .values(**values)
        .returning(StoryState.revision)
        .execution_options(synchronize_session=False)
    )
    new_revision = result.scalar_one_or_none()
    if new_revision is None:
        await session.rollback()
        actual = await session.scalar(select(StoryState.revision).where(StoryState.id == row_id))
        raise StaleStateWrite(expected_revision, actual)
    await session.commit()
    return int(new_revision)


async def record_outcome(session: AsyncSession, row_id: int, expected_revision: int, *, status: str,
                         last_outcome: dict[str, Any]) -> bool:
    """Note what happened in a turn that wrote no state (a failed init, a pending advance) without
    bumping the revision: the state did not change, so a writer holding this revision stays valid.
    Only when the row is still at ``expected_revision``, so a newer write's outcome is never
    overwritten. Returns whether it was recorded. Commits."""
    result = await session.execute(
        update(StoryState)
        .where(StoryState.id == row_id, StoryState.revision == expected_revision)
        .values(status=status, last_outcome=last_outcome, updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    await session.commit()
    return bool(result.rowcount)
