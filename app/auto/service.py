"""Stopping auto mode, from ``DELETE …/auto`` or a user message, on whichever replica is asked.

The stop is written on the run's row first (for a user message, in the transaction that stores
it), then the running auto turn (if any) is stopped through the turn's own Stop path
(``request_cancel``: the turn ends ``cancelled``, a reply already saved stays, the draft being
written is taken back). A user message never waits behind auto mode and is never lost: it stops
the run, cancels the auto turn holding the conversation's lock and waits (at most
``USER_WAIT_S``) for the lock, then is accepted like any message.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from app.auto import repository as runs
from app.db.models import AutoRun
from app.messages.store import InTransaction
from app.turns.cancel import TurnNotRunning, request_cancel
from app.turns.repository import TurnInProgress

T = TypeVar("T")
USER_WAIT_S = 10.0  # a cancelled auto turn ends within a second; a dead one's lease within LEASE_S
RETRY_S = 0.1


async def stop(state: Any, owner_id: str, conversation_id: str, reason: str) -> AutoRun | None:
    """Ask the conversation's run to stop and cancel its running turn; None when none runs."""
    run = await runs.request_stop(state.sessions, owner_id, conversation_id, reason)
    if run is None:
        return None
    state.auto_runner.wake(run.id)
    await cancel_auto_turn(state, owner_id, conversation_id)
    return run


async def cancel_auto_turn(state: Any, owner_id: str, conversation_id: str) -> bool:
    """Stop the conversation's running auto turn; False when the running turn (if any) is not one."""
    async with state.sessions() as session:
        turn_id = await runs.running_auto_turn(session, conversation_id)
        if turn_id is None:
            return False
        try:
            await request_cancel(session, owner_id, conversation_id, turn_id)
        except TurnNotRunning:
            return True  # it just ended: the lock is free or about to be
        await session.commit()
    state.turn_pipeline.running.stop(turn_id)
    return True


async def before_user_message(state: Any, owner_id: str, conversation_id: str,
                              start: Callable[[InTransaction], Awaitable[T]]) -> T:  # fmt: skip
    """``start`` (the user's turn), which ends the conversation's auto mode in the transaction
    that stores the message (``start`` runs the hook it is given there: one statement, no session
    or round trip of its own before the user's first words). While an auto turn still holds the
    lock, the run is stopped on its own, the auto turn cancelled and ``start`` tried again, up to
    ``USER_WAIT_S``; a lock held by anything else is the usual 409 ``turn_in_progress`` (auto
    mode is stopped all the same: the user spoke)."""
    asked: list[str] = []

    async def stop_with_message(session: AsyncSession, conv_id: str) -> None:
        if (run_id := await runs.stop_in(session, owner_id, conv_id, "user_message")) is not None:
            asked.append(run_id)

    deadline = time.monotonic() + USER_WAIT_S
    stopped = False  # the run was stopped outside the refused message's transaction
    other = False  # the last try found the lock held by something that is not an auto turn
    while True:
        try:
            started = await start(stop_with_message)
            break
        except TurnInProgress:
            if not stopped:  # the run no longer starts auto turns: the one holding the lock is the last
                await stop(state, owner_id, conversation_id, "user_message")
                stopped = True
            auto = await cancel_auto_turn(state, owner_id, conversation_id)
            if time.monotonic() >= deadline or (other and not auto):
                raise
            other = not auto  # once more: the auto turn may have ended in between
            await asyncio.sleep(RETRY_S)
    for run_id in asked:  # committed with the message: the run ends its loop now, not at its next check
        state.auto_runner.wake(run_id)
    return started
