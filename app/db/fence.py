"""Fencing: a turn's writes land only while its process still holds the turn's lease.

A running turn holds its conversation's lock (``turns.running_lock``) under a lease that its
process renews. A process that stops long enough (a GC pause, a frozen VM, SIGSTOP) loses the
lease: another replica marks the turn ``failed: turn_abandoned`` and a new turn may start. When
the paused process wakes it must not go on writing into the conversation of that new turn.

The lease's epoch is the turn row itself: a lease is never handed from one turn to another (a
takeover ends the old row and starts a new one), so "this turn row still holds the lock" is the
fencing token. Every transaction a turn makes is fenced the same way, whoever wrote the code:

* ``fenced(turn_id)`` marks the current task (and the tasks it starts: context variables are
  copied into them) as running that turn, until ``Fence.end()`` says the turn's own final write
  (``finish_turn``) has landed: from then on the turn is over and nobody can take it over, so its
  last events and late parts (suggestions) are written without the check;
* before the first write of any transaction in such a task, one statement
  ``UPDATE turns SET lease_expires_at = … WHERE id = :turn AND running_lock IS NOT NULL`` runs in
  the same transaction. It takes the turn row's write lock (PostgreSQL) or the database write
  lock (SQLite), so no takeover can commit between the check and the writes; it renews the lease
  as a side effect; and when it matches no row, ``LeaseLost`` is raised and the transaction is
  rolled back: nothing of that transaction is stored.

"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from datetime import timedelta

from sqlalchemy import event, select, update
from sqlalchemy.orm import ORMExecuteState, Session, SessionTransaction

from app.db.models import Turn, utcnow
from app.errors import AppError

class Fence:
    """Shared by reference between the turn's tasks: ``end()`` in one is seen by all."""

    __slots__ = ("ended", "turn_id")

    def __init__(self, turn_id: str) -> None:
        self.turn_id = turn_id
        self.ended = False

    def end(self) -> None:
        self.ended = True


_TURN: contextvars.ContextVar[Fence | None] = contextvars.ContextVar("fenced_turn", default=None)
_CHECKED = "fence_checked"  # session.info: the transaction whose first write was fenced
_LEASE = {"seconds": 4.0}  # set by the turn repository (its LEASE_S)


class LeaseLost(AppError):
    """The turn's lease is held by another process now (or the turn was ended): write nothing."""

    status_code = 409
    code = "turn_abandoned"  # also the error code of a turn another process ended

    def __init__(self, turn_id: str) -> None:
        super().__init__(f"turn {turn_id} lost its lease to another process; nothing more is recorded",
                         details={"turnId": turn_id})  # fmt: skip
        self.turn_id = turn_id


ABANDONED_CODE = LeaseLost.code


def set_lease_seconds(seconds: float) -> None:
    _LEASE["seconds"] = seconds


@contextlib.contextmanager
def fenced(turn_id: str) -> Iterator[Fence]:
    fence = Fence(turn_id)
    token = _TURN.set(fence)
    try:
        yield fence
    finally:
        _TURN.reset(token)


@contextlib.contextmanager
def unfenced() -> Iterator[None]:
    """For the lease's own writes (the heartbeat's renewal is itself the check: fencing it would
    run the same UPDATE twice)."""
    token = _TURN.set(None)
    try:
        yield
    finally:
        _TURN.reset(token)


def current() -> Fence | None:
    return _TURN.get()


def _check(session: Session) -> None:
    fence = _TURN.get()
    if fence is None or fence.ended:
        return
    turn_id = fence.turn_id
    transaction = session.get_transaction()
    if transaction is None or session.info.get(_CHECKED) is transaction:
        return
    session.info[_CHECKED] = transaction  # before the statement: it is a write and comes back here
    t = Turn.__table__.c
    held = session.execute(
        update(Turn.__table__).where(t.id == turn_id, t.running_lock.is_not(None))
        .values(lease_expires_at=utcnow() + timedelta(seconds=_LEASE["seconds"]))
    )  # fmt: skip
    if held.rowcount:
        return
    # Not running any more: ended by this process (``finish_turn`` committed a moment ago and a
    # write of the same turn ran before ``end()``), or by another one (``turn_abandoned``). An
    # ended turn's status never changes again, so a plain read decides.
    status, error = session.execute(select(t.status, t.error).where(t.id == turn_id)).one_or_none() or ("gone", None)
    if status == "running" or status == "gone" or (error or {}).get("code") == ABANDONED_CODE:
        raise LeaseLost(turn_id)
    fence.end()


def _on_execute(state: ORMExecuteState) -> None:
    if state.is_insert or state.is_update or state.is_delete:
        _check(state.session)


def _on_flush(session: Session, _context: object, _instances: object) -> None:
    if session.new or session.dirty or session.deleted:
        _check(session)


def _on_end(session: Session, transaction: SessionTransaction) -> None:
    if session.info.get(_CHECKED) is transaction:
        del session.info[_CHECKED]


def install() -> None:
    """Listen on every ORM session (idempotent)."""
    if not event.contains(Session, "do_orm_execute", _on_execute):
        event.listen(Session, "do_orm_execute", _on_execute)
        event.listen(Session, "before_flush", _on_flush)
        event.listen(Session, "after_transaction_end", _on_end)



