"""Story state rows: read, create-if-missing, and compare-and-swap on ``revision``.

Every write is ``UPDATE ... WHERE id = :id AND revision = :expected`` and bumps the revision in
the same statement, so two writers that read the same revision cannot both win, across server
processes and on both databases: PostgreSQL re-checks the ``WHERE`` after the row lock, SQLite
serialises writers. Zero rows updated means someone else wrote first: ``StaleStateWrite``.
Creation is ``INSERT ... ON CONFLICT DO NOTHING`` on the scope's unique constraint, so two
first turns racing for a new scope both end up reading the one row.

Quarantined events live in ``story_quarantine``, not in the state: a save that carries the turn's
new records (the coordinator's outbox) inserts them in the same transaction as the CAS update, so
a rejected write stores none. Retention, applied on every such insert: per state at most
``QUARANTINE_KEEP`` records and none older than ``QUARANTINE_MAX_AGE``; released and discarded
records go before open ones, oldest first. It is an operator's work queue, not an audit archive
(the seed's Axon ledger is bounded the same way).

``last_outcome`` also keeps ``lastFailure`` (kind, reason, at, count in a row, total) across later
successes, so the status report shows what failed last, when, and how often; and ``lastReset``
(at, by, previousStatus, previousRevision, archivedId, total) once the scope was reset.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import msgspec
from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Conversation, StoryCheckpoint, StoryQuarantine, StoryState, new_id, utcnow
from app.errors import StaleStateWrite

QUARANTINE_KEEP = 50
QUARANTINE_MAX_AGE = timedelta(days=30)
CHECKPOINT_KEEP = 30  # per state: a rewind further back than this reinitialises the Story


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


async def _swap(session: AsyncSession, row_id: int, expected_revision: int, values: dict[str, Any]) -> int:
    """The one compare-and-swap: update the row while it still has ``expected_revision``, bumping the
    revision in the same statement; otherwise roll back and raise ``StaleStateWrite``."""
    result = await session.execute(
        update(StoryState)
        .where(StoryState.id == row_id, StoryState.revision == expected_revision)
        .values(revision=StoryState.revision + 1, updated_at=utcnow(), **values)
        .returning(StoryState.revision)
        .execution_options(synchronize_session=False)
    )
    new_revision = result.scalar_one_or_none()
    if new_revision is None:
        await session.rollback()
        actual = await session.scalar(select(StoryState.revision).where(StoryState.id == row_id))
        raise StaleStateWrite(expected_revision, actual)
    return int(new_revision)


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
    """Write when the row still has ``expected_revision``; returns the new revision. Commits.

    ``quarantine``: the records this save quarantined (stored in ``story_quarantine``)."""
    values: dict[str, Any] = {"status": status}
    if envelope is not msgspec.UNSET:
        values["envelope"] = envelope
    if quarantine is not None:
        values["quarantine"] = []  # the legacy column: records live in their own table
    if last_outcome is not None or status == "state_too_large":
        values["last_outcome"] = await _with_last_failure(session, row_id, status, last_outcome)
    new_revision = await _swap(session, row_id, expected_revision, values)
    if quarantine:
        await _store_quarantine(session, row_id, quarantine)
    if isinstance(envelope, bytes):
        await _checkpoint(session, row_id, new_revision, status, envelope)
    await session.commit()
    return new_revision


async def record_outcome(session: AsyncSession, row_id: int, expected_revision: int, *, status: str,
                         last_outcome: dict[str, Any]) -> bool:
    """Note what happened in a turn that wrote no state (a failed init, a pending advance) without
    bumping the revision: the state did not change, so a writer holding this revision stays valid.
    Only when the row is still at ``expected_revision``, so a newer write's outcome is never
    overwritten. Returns whether it was recorded. Commits."""
    last_outcome = await _with_last_failure(session, row_id, status, last_outcome)
    result = await session.execute(
        update(StoryState)
        .where(StoryState.id == row_id, StoryState.revision == expected_revision)
        .values(status=status, last_outcome=last_outcome, updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    await session.commit()
    return bool(result.rowcount)


def prior_failures(stored: StoredState | None) -> int:
    """Turns in a row whose Story failed (``BeforeActorInput.prior_failures``)."""
    return int(((stored.last_outcome if stored else None) or {}).get("failures") or 0)


async def _with_last_failure(session: AsyncSession, row_id: int, status: str,
                             outcome: dict[str, Any] | None) -> dict[str, Any]:
    """The new outcome, carrying ``lastFailure`` over; a failure (an outcome with a reason, or a
    halted ``state_too_large`` save) becomes the new ``lastFailure``."""
    prev = await session.scalar(select(StoryState.last_outcome).where(StoryState.id == row_id)) or {}
    out = dict(outcome or {"kind": status, "at": utcnow().isoformat(), "toolCalls": []})
    if status == "state_too_large" and "reason" not in out:
        out["reason"] = "state_too_large: even compacted, the state exceeds maxStateBytes; the Story is halted"
        out["failures"] = int(prev.get("failures") or 0) + 1
    last = prev.get("lastFailure")
    if "reason" in out:
        total = int((last or {}).get("total") or 0) + 1
        last = {"kind": out.get("kind"), "reason": out["reason"], "at": out.get("at") or utcnow().isoformat(),
                "count": int(out.get("failures") or 1), "total": total}  # fmt: skip
    if last is not None:
        out["lastFailure"] = last
    reset = prev.get("lastReset")
    if out.get("kind") == "reset":
        reset = {key: out.get(key) for key in ("at", "by", "previousStatus", "previousRevision", "archivedId")}
        reset["total"] = int((prev.get("lastReset") or {}).get("total") or 0) + 1
    if reset is not None:
        out["lastReset"] = reset
    return out


# -- quarantined events ------------------------------------------------------------------------


async def _store_quarantine(session: AsyncSession, state_id: int, records: list[Any]) -> None:
    row = await session.get(StoryState, state_id)
    assert row is not None
    now = utcnow()
    for rec in records:
        rec = msgspec.to_builtins(rec)
        event_id = str(rec["event_id"])[:160]
        existing = await session.scalar(select(StoryQuarantine).where(
            StoryQuarantine.state_id == state_id, StoryQuarantine.event_id == event_id))  # fmt: skip
        if existing is None:
            session.add(StoryQuarantine(
                id=new_id(), state_id=state_id, owner_id=row.owner_id, conversation_id=row.conversation_id,
                agent_id=row.agent_id, event_id=event_id, reason=str(rec.get("reason", ""))[:500], record=rec,
                status="quarantined", created_at=now,
            ))  # fmt: skip
        else:  # released earlier and quarantined again
            existing.record, existing.reason, existing.status = rec, str(rec.get("reason", ""))[:500], "quarantined"
            existing.created_at, existing.resolved_at = now, None
    await session.flush()
    await _apply_retention(session, state_id, now)


async def _apply_retention(session: AsyncSession, state_id: int, now: Any) -> None:
    await session.execute(delete(StoryQuarantine).where(
        StoryQuarantine.state_id == state_id, StoryQuarantine.created_at < now - QUARANTINE_MAX_AGE))  # fmt: skip
    rows = (await session.execute(
        select(StoryQuarantine.id, StoryQuarantine.status, StoryQuarantine.created_at)
        .where(StoryQuarantine.state_id == state_id)
    )).all()  # fmt: skip
    if len(rows) <= QUARANTINE_KEEP:
        return
    # resolved first, then oldest first
    order = sorted(rows, key=lambda r: (r.status == "quarantined", r.created_at, r.id))
    drop = [r.id for r in order[: len(rows) - QUARANTINE_KEEP]]
    await session.execute(delete(StoryQuarantine).where(StoryQuarantine.id.in_(drop)))


async def list_quarantine(session: AsyncSession, *, conversation_id: str | None = None, agent_id: str | None = None,
                          status: str | None = "quarantined", limit: int = 100) -> list[StoryQuarantine]:
    q = select(StoryQuarantine)
    if conversation_id:
        q = q.where(StoryQuarantine.conversation_id == conversation_id)
    if agent_id:
        q = q.where(StoryQuarantine.agent_id == agent_id)
    if status:
        q = q.where(StoryQuarantine.status == status)
    q = q.order_by(StoryQuarantine.created_at.desc(), StoryQuarantine.id).limit(limit)
    return list((await session.scalars(q)).all())


async def quarantine_of(session: AsyncSession, state_id: int) -> list[StoryQuarantine]:
    return list((await session.scalars(
        select(StoryQuarantine).where(StoryQuarantine.state_id == state_id, StoryQuarantine.status == "quarantined")
        .order_by(StoryQuarantine.created_at, StoryQuarantine.id)
    )).all())  # fmt: skip


async def get_quarantined(session: AsyncSession, record_id: str) -> StoryQuarantine | None:
    return await session.scalar(
        select(StoryQuarantine).where(StoryQuarantine.id == record_id).execution_options(populate_existing=True))


async def resolve_quarantined(session: AsyncSession, record_id: str, status: str, *,
                              state_write: tuple[int, int, bytes] | None = None) -> bool:
    """Mark an open record released/discarded; a release also CAS-writes the state that re-queues
    it (``state_write``: row id, expected revision, envelope), in the same transaction. Commits."""
    marked = await session.execute(
        update(StoryQuarantine).where(StoryQuarantine.id == record_id, StoryQuarantine.status == "quarantined")
        .values(status=status, resolved_at=utcnow()).execution_options(synchronize_session=False)
    )  # fmt: skip
    if marked.rowcount != 1:
        await session.rollback()
        return False
    if state_write is not None:
        row_id, expected, envelope = state_write
        await _swap(session, row_id, expected, {"envelope": envelope})
    await session.commit()
    return True


async def reset_state(session: AsyncSession, row_id: int, expected_revision: int, *, record_id: str,
                      archived: dict[str, Any], last_outcome: dict[str, Any]) -> int:
    """Start the scope over: in one transaction, the state row (still at ``expected_revision``)
    loses its envelope (the next turn initialises afresh) and the old state is kept as a
    ``story_quarantine`` record ``record_id`` of status ``reset`` for an admin. Returns the new revision.
    A writer that read the old revision meanwhile gets ``StaleStateWrite``. Commits."""
    outcome = await _with_last_failure(session, row_id, "reset", last_outcome)
    revision = await _swap(session, row_id, expected_revision,
                           {"status": "reset", "envelope": None, "quarantine": [], "last_outcome": outcome})
    row = await session.get(StoryState, row_id)
    assert row is not None
    now = utcnow()
    session.add(StoryQuarantine(
        id=record_id, state_id=row_id, owner_id=row.owner_id, conversation_id=row.conversation_id,
        agent_id=row.agent_id, event_id=f"reset@{expected_revision}:{record_id}", reason=str(archived["reason"])[:500],
        record=archived, status="reset", created_at=now,
    ))  # fmt: skip
    await session.flush()
    await _apply_retention(session, row_id, now)
    await session.commit()
    return revision


# -- checkpoints (issue 27: rewind) --------------------------------------------------------------


async def _checkpoint(session: AsyncSession, state_id: int, revision: int, status: str, envelope: bytes) -> None:
    """Keep the state just written, stamped with the conversation's ``last_seq`` now: everything
    the state has seen has a seq at or below it, so a rewind to a message at or after that seq may
    restore it. The newest ``CHECKPOINT_KEEP`` per state are kept."""
    at_seq = await session.scalar(select(Conversation.last_seq).join(
        StoryState, StoryState.conversation_id == Conversation.id).where(StoryState.id == state_id))  # fmt: skip
    session.add(StoryCheckpoint(state_id=state_id, revision=revision, at_seq=int(at_seq or 0), status=status,
                                envelope=envelope, created_at=utcnow()))  # fmt: skip
    await session.flush()
    keep = select(StoryCheckpoint.id).where(StoryCheckpoint.state_id == state_id).order_by(
        StoryCheckpoint.id.desc()).limit(CHECKPOINT_KEEP)  # fmt: skip
    await session.execute(delete(StoryCheckpoint).where(StoryCheckpoint.state_id == state_id,
                                                        StoryCheckpoint.id.not_in(keep.scalar_subquery())))  # fmt: skip


class Checkpoint(msgspec.Struct, frozen=True):
    revision: int
    at_seq: int
    status: str
    envelope: bytes | None


async def states_of(session: AsyncSession, conversation_id: str) -> list[StoryState]:
    return list((await session.scalars(select(StoryState).where(StoryState.conversation_id == conversation_id)
                                       .order_by(StoryState.id).execution_options(populate_existing=True))).all())  # fmt: skip


async def checkpoint_at(session: AsyncSession, state_id: int, seq: int) -> tuple[Checkpoint | None, bool]:
    """The newest checkpoint written while the conversation was at or before ``seq``, and whether
    older ones may have been dropped by retention (so a miss is a loss, not a Story not yet begun)."""
    row = await session.scalar(select(StoryCheckpoint).where(StoryCheckpoint.state_id == state_id,
                                                             StoryCheckpoint.at_seq <= seq)
                               .order_by(StoryCheckpoint.id.desc()).limit(1))  # fmt: skip
    kept = int(await session.scalar(select(func.count()).where(StoryCheckpoint.state_id == state_id)) or 0)
    found = Checkpoint(row.revision, row.at_seq, row.status, row.envelope) if row is not None else None
    return found, kept >= CHECKPOINT_KEEP


async def rewind_state(session: AsyncSession, state: StoryState, to_seq: int, *, restore: Checkpoint | None,
                       record_id: str, archived: dict[str, Any], last_outcome: dict[str, Any]) -> int:
    """In the caller's transaction: the state goes back to ``restore`` (None: it starts over, the
    next turn initialises from the history that is left); the state it had is kept for an admin as
    a ``story_quarantine`` record of status ``reset``; checkpoints of the removed branch go.
    CAS on the revision read with ``state``: a writer racing the rewind gets ``StaleStateWrite``."""
    outcome = await _with_last_failure(session, state.id, "reset", last_outcome)
    values: dict[str, Any] = {"status": restore.status if restore else "reset",
                              "envelope": restore.envelope if restore else None, "last_outcome": outcome}  # fmt: skip
    revision = await _swap(session, state.id, state.revision, values)
    session.add(StoryQuarantine(
        id=record_id, state_id=state.id, owner_id=state.owner_id, conversation_id=state.conversation_id,
        agent_id=state.agent_id, event_id=f"rewind@{state.revision}:{record_id}", reason=str(archived["reason"])[:500],
        record=archived, status="reset", created_at=utcnow(),
    ))  # fmt: skip
    await session.execute(delete(StoryCheckpoint).where(StoryCheckpoint.state_id == state.id,
                                                        StoryCheckpoint.at_seq > to_seq))  # fmt: skip
    await session.flush()
    await _apply_retention(session, state.id, utcnow())
    return revision
