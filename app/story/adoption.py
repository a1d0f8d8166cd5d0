"""Story adoption in the background: the reply a turn saved is adopted (the world advanced on
its saved text) right after that turn, instead of in front of the next turn's actor.

The adopted state goes into ``story_states.adopted_envelope`` with ``adoption`` (which message,
its content hash then, the revision it adopted from, the tool calls) by a conditional write on the row's unchanged
``revision``: a turn that wrote the row meanwhile wins and the adoption is simply not used.
``envelope`` itself stays the pre-adoption state, so when the user edits the reply before the
next turn, that turn sees a different content hash and adopts the edited text itself.

Together with the settle pass beside the actor (``app.story.hooks``), only the prepare stays in
front of the next turn's actor.

A group's agents that have no Story yet are initialised after a turn too (``schedule_init``):
one compare-and-swap write from the empty row (status ``initialized``; a turn that wrote the row
first wins), so their first turn prepares without initialising in front of the actor.

A conversation's background jobs run one at a time (the other members' jobs queue), so they
never take every slot of a local model server from the turn in front of the user.

In-process, the next turn of the same agent waits (bounded) for an adoption or initialisation
still running, and cancels one that outlasts the wait (the turn then does the work itself, and no
late background write can make its save stale); another server process just adopts (or
initialises) in the turn, as without this.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import msgspec
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.models import Message, StoryState, utcnow
from app.errors import StaleStateWrite
from app.story import repository
from app.story.messages import load_history
from app.story.repository import StoredState, StoryScope
from story.coordinator.turn import BeforeActorInput, StoryCoordinator
from story.tools.common import StoryContext

log = logging.getLogger("app.story")
Key = tuple[str, str, str]
INITIALIZED_KEEP = 10_000
INIT_RETRY_AFTER_S = 300.0


class Adopted(msgspec.Struct, frozen=True):
    envelope: bytes
    tool_calls: list[str]
    diagnostics: list[Any]
    usage: dict[str, Any]


class _Lane:
    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class BackgroundAdoption:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions
        self.running: dict[Key, asyncio.Task[None]] = {}
        self.lanes: dict[tuple[str, str], _Lane] = {}  # per conversation, while it has jobs
        # Scopes found with a state: not looked at again; scopes whose initialisation failed: not
        # tried again for INIT_RETRY_AFTER_S (a model that is down is not paid for every turn).
        # Bounded: cleared when one grows past INITIALIZED_KEEP (a lookup then happens once more).
        self.initialized: set[Key] = set()
        self.init_failed: dict[Key, float] = {}

    def schedule(self, scope: StoryScope, coordinator: StoryCoordinator, build: Any, *, pending_id: str,
                 last_seq: int, names: dict[str, str], max_state_bytes: int) -> None:  # fmt: skip
        self._start(scope, self._run(scope, coordinator, build, pending_id, last_seq, names, max_state_bytes))

    def schedule_init(self, scope: StoryScope, coordinator: StoryCoordinator, build: Any, *, last_seq: int,
                      names: dict[str, str], max_state_bytes: int) -> None:  # fmt: skip
        key = (scope.owner_id, scope.conversation_id, scope.agent_id)
        failed = self.init_failed.get(key)
        if key in self.running or key in self.initialized or (failed and time.monotonic() - failed < INIT_RETRY_AFTER_S):
            return
        self._start(scope, self._init(scope, coordinator, build, last_seq, names, max_state_bytes))

    def _start(self, scope: StoryScope, job: Any) -> None:
        key = (scope.owner_id, scope.conversation_id, scope.agent_id)
        task = asyncio.ensure_future(self._in_lane((scope.owner_id, scope.conversation_id), job))
        self.running[key] = task
        task.add_done_callback(lambda t: self.running.pop(key, None) if self.running.get(key) is t else None)

    async def _in_lane(self, lane_key: tuple[str, str], job: Any) -> None:
        """One background job at a time per conversation: a group's members initialising ahead
        together kept every slot of a local model server busy, and the turn in front of the user
        waited behind them (Qwen on two slots: intent and emotion timed out)."""
        lane = self.lanes.setdefault(lane_key, _Lane())
        lane.users += 1
        try:
            async with lane.lock:
                await job
        finally:
            job.close()  # never started (cancelled while queued): no "never awaited" warning
            lane.users -= 1
            if not lane.users:
                self.lanes.pop(lane_key, None)

    async def wait(self, scope: StoryScope, timeout_s: float) -> None:
        """Wait (bounded) for the scope's job still running; one that outlasts the wait is
        cancelled, so it cannot write over the state the waiting turn is about to build itself
        (its compare-and-swap would win, and the turn's save be rejected as stale)."""
        task = self.running.get((scope.owner_id, scope.conversation_id, scope.agent_id))
        if task is None:
            return
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
        if not done:
            task.cancel()
            await asyncio.wait({task})

    async def close(self) -> None:
        for task in list(self.running.values()):
            task.cancel()

    async def _run(self, scope: StoryScope, coordinator: StoryCoordinator, build: Any, pending_id: str,
                   last_seq: int, names: dict[str, str], max_state_bytes: int) -> None:  # fmt: skip
        try:
            async with self.sessions() as session:
                stored = await repository.read(session, scope)
                if stored is None or stored.envelope is None:
                    return
                history = await load_history(session, scope.conversation_id, last_seq + 1, names, pending_id,
                                             agent_id=scope.agent_id)  # fmt: skip
                before = await _content_hash(session, pending_id)
            inp: BeforeActorInput = build(stored.envelope, history)
            res = await coordinator.adopt_pending(inp, max_state_bytes)
            if res.payload is None:
                return
            async with self.sessions() as session:
                if await _content_hash(session, pending_id) != before:  # edited while adopting
                    return
                adoption = {"messageId": pending_id, "contentHash": before, "revision": stored.revision, "toolCalls": list(res.tool_calls),
                            "diagnostics": msgspec.to_builtins(res.diagnostics), "usage": msgspec.to_builtins(res.usage),
                            "at": utcnow().isoformat()}  # fmt: skip
                await session.execute(
                    update(StoryState).where(StoryState.id == stored.id, StoryState.revision == stored.revision)
                    .values(adopted_envelope=res.payload, adoption=adoption)
                    .execution_options(synchronize_session=False)
                )  # fmt: skip
                await session.commit()
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - the next turn adopts itself
            log.exception("background story adoption failed for agent %s", scope.agent_id)

    async def _init(self, scope: StoryScope, coordinator: StoryCoordinator, build: Any, last_seq: int,
                    names: dict[str, str], max_state_bytes: int) -> None:  # fmt: skip
        key = (scope.owner_id, scope.conversation_id, scope.agent_id)
        try:
            async with self.sessions() as session:
                stored = await repository.ensure(session, scope)
                if stored.envelope is not None:
                    return self._remember(key)
                history = await load_history(session, scope.conversation_id, last_seq + 1, names, None, agent_id=scope.agent_id)
            res = await coordinator.initialize_ahead(build(None, history), max_state_bytes)
            if res.payload is None:  # the agent's first turn initialises itself; no retry for a while
                return self._remember(key, self.init_failed)
            last = {"kind": "initialized", "at": utcnow().isoformat(), "toolCalls": list(res.tool_calls), "failures": 0}
            async with self.sessions() as session:  # a turn that wrote the row meanwhile wins
                await repository.compare_and_swap(session, stored.id, stored.revision, status="initialized",
                                                  envelope=res.payload, last_outcome=last)  # fmt: skip
            self._remember(key)
        except asyncio.CancelledError:
            raise
        except StaleStateWrite:
            self._remember(key)
        except Exception:  # noqa: BLE001 - the agent's first turn initialises itself
            log.exception("background story initialisation failed for agent %s", scope.agent_id)
            self._remember(key, self.init_failed)
        return None

    def _remember(self, key: Key, into: set[Key] | dict[Key, float] | None = None) -> None:
        into = self.initialized if into is None else into
        if len(into) >= INITIALIZED_KEEP:
            into.clear()
        if isinstance(into, dict):
            into[key] = time.monotonic()
        else:
            into.add(key)


async def reusable(session: AsyncSession, stored: StoredState, pending_id: str | None) -> Adopted | None:
    """The background adoption of ``pending_id`` when it is still valid: the row was not written
    since, and the reply's saved text is unchanged (same content hash)."""
    if pending_id is None:
        return None
    row = (await session.execute(
        select(StoryState.adopted_envelope, StoryState.adoption).where(StoryState.id == stored.id)
    )).first()  # fmt: skip
    if row is None or row.adopted_envelope is None or not row.adoption:
        return None
    meta = row.adoption
    if meta.get("revision") != stored.revision or meta.get("messageId") != pending_id or meta.get("contentHash") != await _content_hash(session, pending_id):
        return None
    return Adopted(row.adopted_envelope, list(meta.get("toolCalls") or []), list(meta.get("diagnostics") or []),
                   dict(meta.get("usage") or {}))  # fmt: skip


async def _content_hash(session: AsyncSession, message_id: str) -> str | None:
    return await session.scalar(select(Message.content_hash).where(Message.id == message_id, Message.deleted_at.is_(None)))


def story_context(turn_id: str, user_message_id: str, agent_id: str, language: str) -> StoryContext:
    return StoryContext(request_id=turn_id, turn_id=f"{user_message_id}:{agent_id}", language=language)
