"""Helpers for benchmarks: run the real server process on loopback, on SQLite or PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx

SECRET = "bench-secret-" + "x" * 32


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def postgres_database(base_url: str) -> Iterator[str]:
    from sqlalchemy.engine import make_url

    from tests.conftest import _admin_exec

    name = f"companion_bench_{uuid.uuid4().hex[:8]}"
    asyncio.run(_admin_exec(base_url, f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(base_url).set(database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(_admin_exec(base_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@contextlib.contextmanager
def server(database_url: str | None, extra_env: dict[str, str] | None = None) -> Iterator[str]:
    """Start ``companion serve`` (migrating first) and yield its base URL."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "COMPANION_DATA_DIR": tmp, "COMPANION_JWT_SECRET": SECRET, "COMPANION_LOG_LEVEL": "WARNING",
               **(extra_env or {})}  # fmt: skip
        if database_url:
            env["COMPANION_DATABASE_URL"] = database_url
            subprocess.run([sys.executable, "-m", "app.cli", "migrate"], env=env, check=True, capture_output=True)
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--factory", "app.asgi:create", "--port", str(port),
             "--log-level", "warning", "--no-access-log"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        try:
            wait_ready(proc, base, 30)
            yield base
        finally:
            proc.terminate()
            proc.wait(10)


@contextlib.contextmanager
def simulator_process(latency_ms: float, ttft_ms: float, tokens_per_s: float, seed: int = 1) -> Iterator[str]:
    """``companion simulate-llm`` in its own process (as a model server is): its CPU work for
    schema-valid answers then does not share the benchmark client's interpreter. Yields the
    OpenAI base URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "simulate-llm", "--port", str(port), "--latency-ms", str(latency_ms),
         "--ttft-ms", str(ttft_ms), "--tokens-per-s", str(tokens_per_s), "--seed", str(seed)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(proc, base, 30, path="/v1/models")
        yield base + "/v1"
    finally:
        proc.terminate()
        proc.wait(10)


def wait_ready(proc: subprocess.Popen, base: str, timeout_s: float, path: str = "/readyz") -> None:
    """Until ``/readyz`` answers 200; a process that exits meanwhile, or the timeout, raises."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(base + path, timeout=1).status_code == 200:
                return
        if proc.poll() is not None:
            raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "server exited during start-up")
        time.sleep(0.1)
    raise RuntimeError(f"server at {base} did not become ready within {timeout_s:g}s")


def token(user: str, admin: bool = False) -> dict[str, str]:
    from app.auth.tokens import issue_token

    return {"Authorization": f"Bearer {issue_token(SECRET, user, admin=admin, ttl_s=3600)}"}


async def load(n_clients: int, seconds: float, call: Callable[[int], Awaitable[Any]]) -> dict[str, float]:
    """``n_clients`` loops calling ``call`` for ``seconds``; returns rps and latency percentiles."""
    latencies: list[float] = []
    errors = 0
    stop = time.perf_counter() + seconds

    async def worker(i: int) -> None:
        nonlocal errors
        while time.perf_counter() < stop:
            t = time.perf_counter()
            try:
                await call(i)
            except Exception:  # noqa: BLE001
                errors += 1
                continue
            latencies.append((time.perf_counter() - t) * 1000)

    started = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(n_clients)))
    elapsed = time.perf_counter() - started
    return summarize(latencies, elapsed, errors)


def summarize(latencies: list[float], elapsed: float, errors: int = 0) -> dict[str, float]:
    ordered = sorted(latencies) or [0.0]

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 2)

    return {"requests": len(latencies), "errors": errors, "rps": round(len(latencies) / elapsed, 1),
            "p50_ms": pct(0.50), "p99_ms": pct(0.99), "mean_ms": round(statistics.fmean(ordered), 2)}  # fmt: skip
