"""Live fan-out of conversation events: in-process, plus PostgreSQL ``LISTEN/NOTIFY`` across
server processes. The table is the source of truth: a notification only says "conversation X
has new rows"; followers read them from ``conversation_events``. A missed notification costs
latency (followers also re-read on every keep-alive), never an event.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.events import log as event_log

if TYPE_CHECKING:
    from app.events.sink import TurnEventSink

logger = logging.getLogger("app.events")

LIVE_QUEUE_LIMIT = 1000  # a slow follower stops getting live deltas; it reads the coalesced rows
LISTEN_HEALTH_S = 10.0
RECONNECT_MAX_S = 10.0


class Subscription:
    """One follower's inbox: ``("wake", None)`` (new rows; at most one pending), ``("live", (event,
    data))`` (an uncommitted delta from this process), ``("end", None)`` (the hub closed)."""

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        self.queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._wake_pending = False

    def wake(self) -> None:
        if not self._wake_pending:
            self._wake_pending = True
            self.queue.put_nowait(("wake", None))

    def live(self, event: str, data: dict[str, Any]) -> None:
        if self.queue.qsize() < LIVE_QUEUE_LIMIT:
            self.queue.put_nowait(("live", (event, data)))

    def end(self) -> None:
        self.queue.put_nowait(("end", None))

    async def next(self, timeout: float) -> tuple[str, Any] | None:
        """The next item, or ``None`` after ``timeout`` seconds of silence."""
        try:
            kind, payload = await asyncio.wait_for(self.queue.get(), timeout)
        except TimeoutError:
            return None
        if kind == "wake":
            self._wake_pending = False
        return kind, payload


def asyncpg_dsn(database_url: str) -> str:
    """``postgresql+asyncpg://u:p@h/db?…`` → ``postgresql://u:p@h/db?…`` for a raw asyncpg connection."""
    return make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)


PRUNE_EVERY_TURNS = 25


class EventHub:
    """One per app (``app.state.event_hub``): ``await start()`` at start-up, ``await close()`` at shutdown."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], database_url: str) -> None:
        self.sessions = sessions
        self.postgres = make_url(database_url).get_backend_name() == "postgresql"
        self._dsn = asyncpg_dsn(database_url) if self.postgres else None
        self._subscribers: dict[str, set[Subscription]] = {}
        self._listener: asyncio.Task[None] | None = None
        self._listening = asyncio.Event()
        self._background: set[asyncio.Task[Any]] = set()
        self._closes: dict[str, int] = {}  # turns closed per conversation since its last prune
        self._last_prune = 0.0
        self._closed = False
        self.listen_pid: int | None = None  # the LISTEN backend (tests terminate it)

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self, *, wait_listening_s: float = 5.0) -> None:
        if self._dsn is None:
            return
        self._listener = asyncio.create_task(self._listen_forever(), name="conversation-events-listen")
        with contextlib.suppress(TimeoutError):  # serve anyway; followers fall back to re-reading
            await asyncio.wait_for(self._listening.wait(), wait_listening_s)

    async def close(self) -> None:
        self._closed = True
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
        for subs in self._subscribers.values():
            for sub in subs:
                sub.end()
        if self._background:
            await asyncio.wait(self._background, timeout=5)

    @property
    def listening(self) -> bool:
        return self._listening.is_set()

    # -- followers ------------------------------------------------------------------------------

    def subscribe(self, conversation_id: str) -> Subscription:
        sub = Subscription(conversation_id)
        self._subscribers.setdefault(conversation_id, set()).add(sub)
        if self._closed:
            sub.end()
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        subs = self._subscribers.get(sub.conversation_id)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subscribers[sub.conversation_id]

    def wake(self, conversation_id: str) -> None:
        for sub in self._subscribers.get(conversation_id, ()):
            sub.wake()

    def publish_live(self, conversation_id: str, event: str, data: dict[str, Any]) -> None:
        for sub in self._subscribers.get(conversation_id, ()):
            sub.live(event, data)

    # -- writers --------------------------------------------------------------------------------

    def sink(self, conversation_id: str, turn_id: str | None) -> TurnEventSink:
        from app.events.sink import TurnEventSink

        return TurnEventSink(self, conversation_id, turn_id)

    def prune_due(self, conversation_id: str) -> bool:
        """The per-conversation cap is enforced every ``PRUNE_EVERY_TURNS`` turns (and on a
        process's first turn there): a turn writes a few dozen events at most, so the cap is
        exceeded by a bounded amount in between, and the index scan is not paid on every turn."""
        closes = self._closes.get(conversation_id, 0)
        self._closes[conversation_id] = (closes + 1) % PRUNE_EVERY_TURNS
        if len(self._closes) > 10_000:  # a long-lived process: forget the oldest counters
            self._closes.pop(next(iter(self._closes)))
        return closes == 0

    async def append(self, conversation_id: str, turn_id: str | None, events: list[tuple[str, dict[str, Any]]]) -> list[int]:
        ids = await event_log.append(self.sessions, conversation_id, turn_id, events, postgres=self.postgres)
        self.wake(conversation_id)
        if time.monotonic() - self._last_prune > event_log.PRUNE_EVERY_S:
            self._last_prune = time.monotonic()
            self.in_background(event_log.prune_old(self.sessions))
        return ids

    def in_background(self, coro: Any) -> None:
        task = asyncio.ensure_future(self._quietly(coro))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    @staticmethod
    async def _quietly(coro: Any) -> None:
        try:
            await coro
        except Exception:  # noqa: BLE001 - housekeeping must never break a turn
            logger.warning("conversation events housekeeping failed", exc_info=True)

    # -- PostgreSQL LISTEN ----------------------------------------------------------------------

    def _on_notify(self, _conn: Any, _pid: int, _channel: str, payload: str) -> None:
        self.wake(payload)

    def _wake_all(self) -> None:
        for conversation_id in list(self._subscribers):
            self.wake(conversation_id)

    async def _listen_forever(self) -> None:
        """Hold a dedicated ``LISTEN`` connection; reconnect with back-off when it drops."""
        import asyncpg

        delay = 0.2
        while True:
            conn = None
            try:
                conn = await asyncpg.connect(self._dsn, timeout=10)
                lost = asyncio.Event()
                conn.add_termination_listener(lambda _c: lost.set())
                await conn.add_listener(event_log.NOTIFY_CHANNEL, self._on_notify)
                self.listen_pid = conn.get_server_pid()
                self._listening.set()
                self._wake_all()  # rows committed while nobody was listening
                delay = 0.2
                while not lost.is_set():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(lost.wait(), LISTEN_HEALTH_S)
                    if not lost.is_set():  # a half-open TCP connection shows only when used
                        await asyncio.wait_for(conn.execute("SELECT 1"), 5)
                logger.warning("conversation events LISTEN connection lost; reconnecting")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001
                logger.warning("conversation events LISTEN failed (%s: %s); retrying in %.1fs",
                               type(exc).__name__, exc, delay)  # fmt: skip
            finally:
                self._listening.clear()
                if conn is not None:
                    conn.terminate()
            await asyncio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX_S)
