"""Issue 33 item 7: a database that is down or cannot write is a 503 ``database_unavailable``
(retryable, with ``Retry-After``), never a 500; service is back within 2 s of the database.

PostgreSQL goes down for real here: the app reaches it through a TCP proxy that the test cuts
(every connection closed, new ones refused) and restores. SQLite's failures (read-only, full,
I/O) are classified from the driver's errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from pathlib import Path

import pytest
from litestar.testing import AsyncTestClient
from sqlalchemy.engine import make_url

from app.llm.fakes import ScriptedModel
from app.main import create_app
from tests.conftest import _truncate
from tests.integration.conftest import ADMIN, ALICE, make_settings

BACK_WITHIN_S = 2.0


class Proxy:
    """127.0.0.1:<port> → the PostgreSQL server, until ``cut()``. Its own loop in its own thread
    (the test client runs the app in another thread and blocks the test's loop meanwhile)."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = 0
        self.server: asyncio.AbstractServer | None = None
        self.links: set[asyncio.StreamWriter] = set()
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def _run(self, coro):  # noqa: ANN001, ANN202
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    def start(self) -> None:
        self._run(self._start())

    def cut(self) -> None:
        self._run(self._cut())

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)

    async def _start(self) -> None:
        self.server = await asyncio.start_server(self._link, "127.0.0.1", self.port, reuse_address=True)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _cut(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in list(self.links):
            writer.transport.abort()
        self.links.clear()
        await self.server.wait_closed()

    async def _link(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        self.links |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(Exception):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            with contextlib.suppress(Exception):
                dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


async def test_postgres_down_is_a_503_and_service_is_back_within_2_s(postgres_url: str, tmp_path: Path) -> None:
    await _truncate(postgres_url)
    url = make_url(postgres_url)
    proxy = Proxy(url.host or "127.0.0.1", url.port or 5432)
    proxy.start()
    proxied = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    app = create_app(make_settings(proxied, tmp_path), model=ScriptedModel())
    async with AsyncTestClient(app) as client:
        assert (await client.post("/v1/agents", json={"name": "莉娅"}, headers=ADMIN)).status_code == 201
        proxy.cut()
        for method, path, body, headers in [("get", "/v1/agents", None, ADMIN), ("get", "/v1/conversations", None, ALICE),
                                            ("post", "/v1/agents", {"name": "周衡"}, ADMIN)]:  # fmt: skip
            resp = await client.request(method, path, json=body, headers=headers)
            assert resp.status_code == 503, (path, resp.text)
            assert resp.json()["code"] == "database_unavailable" and resp.json()["retryable"] is True
            assert resp.json()["details"]["reason"] == "unreachable"
            assert resp.headers["retry-after"] == "2"
        assert (await client.get("/readyz")).status_code == 503
        assert (await client.get("/healthz")).status_code == 200
        proxy.start()
        back = time.monotonic()
        while (await client.get("/v1/agents", headers=ADMIN)).status_code != 200:
            assert time.monotonic() - back < BACK_WITHIN_S, "service not back within 2 s of the database"
            await asyncio.sleep(0.05)
        assert (await client.get("/readyz")).status_code == 200
        listed = (await client.get("/v1/agents", headers=ADMIN)).json()
        names = [a["name"] for a in (listed["items"] if isinstance(listed, dict) else listed)]
        assert names == ["莉娅"]  # nothing half-written during the outage
    proxy.cut()
    proxy.close()


@pytest.mark.parametrize("message, reason", [
    ("attempt to write a readonly database", "read_only"), ("database or disk is full", "disk_full"),
    ("disk I/O error", "disk_error"),
])  # fmt: skip
def test_sqlite_failures_are_classified(message: str, reason: str) -> None:
    import sqlite3

    from sqlalchemy import exc

    from app.db.outage import outage_reason

    assert outage_reason(exc.OperationalError("INSERT", {}, sqlite3.OperationalError(message))) == reason
    assert outage_reason(ValueError(message)) is None  # only the driver's own errors count


async def test_readyz_is_503_when_the_sqlite_disk_is_full(tmp_path: Path, sqlite_template: Path, monkeypatch) -> None:
    import shutil as _shutil
    from collections import namedtuple

    from app.db import outage

    path = tmp_path / "full.db"
    _shutil.copyfile(sqlite_template, path)
    app = create_app(make_settings(f"sqlite+aiosqlite:///{path}", tmp_path), model=ScriptedModel())
    async with AsyncTestClient(app) as client:
        assert (await client.get("/readyz")).status_code == 200
        usage = namedtuple("usage", "total used free")
        monkeypatch.setattr(outage.shutil, "disk_usage", lambda _p: usage(10**9, 10**9 - 1024, 1024))
        resp = await client.get("/readyz")
        assert resp.status_code == 503 and resp.json()["database"] == "disk_full"
