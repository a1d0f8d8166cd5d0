"""HTTP-level fixtures: the real Litestar app on a real database, with a fake model."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.testing import AsyncTestClient

from app.auth.tokens import issue_token
from app.main import create_app
from app.settings import Settings, load_settings

SECRET = "test-secret-0123456789abcdef-0123456789"


def make_settings(db_url: str, data_dir: Path, **env: str) -> Settings:
    base = {"COMPANION_DATA_DIR": str(data_dir), "COMPANION_DATABASE_URL": db_url, "COMPANION_JWT_SECRET": SECRET}
    return load_settings({**base, **env})


def bearer(user: str, *, admin: bool = False, ttl_s: int = 3600, now: float | None = None) -> dict[str, str]:
    return {"Authorization": f"Bearer {issue_token(SECRET, user, admin=admin, ttl_s=ttl_s, now=now)}"}


ADMIN = bearer("root", admin=True)
ALICE = bearer("alice")
BOB = bearer("bob")


class Api:
    """A test client plus helpers that create the usual fixtures over HTTP."""

    def __init__(self, client: AsyncTestClient, settings: Settings) -> None:
        self.client = client
        self.settings = settings

    async def agent(self, name: str, **fields: Any) -> dict[str, Any]:
        resp = await self.client.post("/v1/agents", json={"name": name, **fields}, headers=ADMIN)
        assert resp.status_code == 201, resp.text
        return resp.json()

    async def group(self, *agent_ids: str, user: dict[str, str] = ALICE, **fields: Any) -> dict[str, Any]:
        body = {"kind": "group", "agentIds": list(agent_ids), **fields}
        resp = await self.client.post("/v1/conversations", json=body, headers=user)
        assert resp.status_code == 201, resp.text
        return resp.json()


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return make_settings(db_url, tmp_path)


@pytest.fixture
def model() -> Any:
    from app.llm.fakes import ScriptedModel

    return ScriptedModel()


@pytest.fixture
async def api(settings: Settings, model: Any) -> AsyncIterator[Api]:
    app = create_app(settings, model=model)
    async with AsyncTestClient(app) as client:
        yield Api(client, settings)


# -- the schema-following simulator over loopback ------------------------------------------------
# One per test module (a module may set ``SIMULATOR_SEED``); ``sim`` resets it to no faults and no
# latency for each test; ``sim_api`` is the app whose default model config points at it.


@pytest.fixture(scope="module")
def simulator(request: pytest.FixtureRequest):
    from app.llm.simulator import start_simulator_in_thread

    handle = start_simulator_in_thread(latency_ms=0, seed=getattr(request.module, "SIMULATOR_SEED", 7), hang_s=5)
    yield handle
    handle.stop()


@pytest.fixture
def sim(simulator):
    from app.llm.simulator import FAULT_KINDS

    simulator.configure(latency_ms=0, jitter_ms=0, fault_rate=0.0, faults=FAULT_KINDS, ttft_ms=None, tokens_per_s=0.0)
    return simulator


@pytest.fixture
async def sim_api(db_url: str, tmp_path: Path, sim) -> AsyncIterator[Api]:
    from app.llm.fakes import block_network_models

    settings = make_settings(db_url, tmp_path, COMPANION_LLM_BASE_URL=sim.base_url, COMPANION_LLM_MODEL="sim",
                             COMPANION_LLM_TIMEOUT_MS="15000")
    with block_network_models():
        async with AsyncTestClient(create_app(settings), timeout=120) as client:
            yield Api(client, settings)


# -- truly concurrent requests --------------------------------------------------------------------
# ``AsyncTestClient`` runs each request to the end on its portal thread before the next one starts,
# so ``asyncio.gather`` over it is sequential. These clients call the ASGI app on the test's own
# event loop (``httpx.ASGITransport``), so gathered requests interleave at every await; and there
# are two app instances ("replicas") on one database, so nothing held in one process's memory can
# serialise them.


@contextlib.asynccontextmanager
async def live_replicas(settings: Settings, model: Any, n: int = 2) -> AsyncIterator[list[Api]]:
    async with contextlib.AsyncExitStack() as stack:
        replicas = []
        for _ in range(n):
            app = create_app(settings, model=model)
            await stack.enter_async_context(app.lifespan())
            client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver.local",
                                       timeout=60)  # fmt: skip
            await stack.enter_async_context(client)
            replicas.append(Api(client, settings))  # type: ignore[arg-type]
        yield replicas


async def hosted(cm: Any) -> AsyncIterator[Any]:
    """Enter and exit an async context manager in one task of its own: a fixture's setup and
    teardown run in different tasks, and the apps' lifespans (anyio task groups) must not."""
    ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def host() -> None:
        async with cm as value:
            ready.set_result(value)
            await stop.wait()

    task = asyncio.ensure_future(host())
    await asyncio.wait([task, ready], return_when=asyncio.FIRST_COMPLETED)
    if not ready.done():
        await task  # it failed on the way in: raise that
    try:
        yield ready.result()
    finally:
        stop.set()
        await task


@pytest.fixture
async def replicas(settings: Settings, model: Any) -> AsyncIterator[list[Api]]:
    """Two app instances on one database, called concurrently (the scripted fake model)."""
    async for apps in hosted(live_replicas(settings, model)):
        yield apps
