"""Browser tests: Playwright driving Debian's ``chromium`` against a real server process.

The server is ``tests/perf/_server.server`` (the app under uvicorn, migrated, on SQLite or a
throw-away PostgreSQL database) with the LLM simulator from ``app.llm.simulator`` and dev tokens
on. Screenshots go to ``tests/browser/screenshots/`` (git-ignored) for reviewers to look at.
Playwright's own browser download cannot be fetched here: ``.ci/run`` installs ``chromium``.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import PG_ENV
from tests.perf import _server

CHROMIUM = Path(os.environ.get("COMPANION_TEST_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS = Path(__file__).parent / "screenshots"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

# What the page shows after a turn can take seconds on a busy CI machine: a turn whose model calls
# fail waits out each call's retries (up to four tries with backoff, app.llm.retry) before the
# failure is shown. Playwright's 5 s default for expect() made such waits flaky in CI.
EXPECT_TIMEOUT_MS = 15_000


@pytest.fixture(scope="module")
def browser() -> Iterator:
    """Per module: the sync API keeps an event loop running in this thread while it is open."""
    if not CHROMIUM.exists():
        pytest.skip(f"browser tests need {CHROMIUM} (apt-get install -y chromium; .ci/run does)")
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def simulator() -> Iterator:
    from app.llm.simulator import start_simulator_in_thread

    # Some latency, so a turn lasts long enough to look at (and to race the composer against).
    handle = start_simulator_in_thread(latency_ms=60, seed=11, hang_s=5)
    yield handle
    handle.stop()


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, simulator) -> Iterator[str]:
    """The base URL of a real server process, one per database for the whole run (tests use their
    own users, agents and conversations, so they do not see each other's data)."""
    env = {"COMPANION_DEV_TOKENS": "1", "COMPANION_LLM_BASE_URL": simulator.base_url, "COMPANION_LLM_MODEL": "sim",
           "COMPANION_LLM_TIMEOUT_MS": "15000"}  # fmt: skip
    if request.param == "sqlite":
        with _server.server(None, env) as base:
            yield base
        return
    pg = os.environ.get(PG_ENV)
    if not pg:
        pytest.skip(f"PostgreSQL variant skipped: set {PG_ENV} to run it")
    database = _server.postgres_database(pg)  # uses asyncio.run: not on Playwright's loop thread
    url = _off_thread(database.__enter__)
    try:
        with _server.server(url, env) as base:
            yield base
    finally:
        _off_thread(database.__exit__, None, None, None)


def _off_thread(fn, *args):
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


@pytest.fixture
def backend(server: str, request: pytest.FixtureRequest) -> str:
    return request.node.callspec.params["server"]


@pytest.fixture
def page(browser, server: str) -> Iterator:
    context = browser.new_context(viewport=DESKTOP, base_url=server)
    context.set_default_timeout(20_000)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


def shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def token(user: str, admin: bool = False) -> str:
    return _server.token(user, admin)["Authorization"].removeprefix("Bearer ")
