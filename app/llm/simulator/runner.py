"""Run the simulator in a background thread on a free loopback port (tests, benchmarks, demos).

The socket is bound before the server starts, so the port is known and cannot be taken by
someone else in between; ``stop()`` shuts the server down and joins the thread.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

import uvicorn

from app.llm.simulator.server import SimulatorOptions, SimulatorState, create_simulator_app


class SimulatorHandle:
    def __init__(self, server: uvicorn.Server, thread: threading.Thread, state: SimulatorState, host: str, port: int) -> None:
        self._server = server
        self._thread = thread
        self.state = state
        self.host = host
        self.port = port
        self.base_url = f"http://{host}:{port}/v1"

    def stats(self) -> dict[str, Any]:
        return self.state.stats()

    def received(self) -> list[dict[str, Any]]:
        """The bodies of the last 200 chat requests it was sent, oldest first."""
        with self.state.lock:
            return list(self.state.received)

    def configure(self, **options: Any) -> None:
        """Change latency, faults, rate or seed of the running simulator."""
        if "faults" in options:
            options["faults"] = tuple(options["faults"])
        self.state.configure(**options)

    def queue_faults(self, *kinds: str | None) -> None:
        """The next requests fail with these faults, in order (``None``: that one answers); no
        arguments clear the queue."""
        self.state.queue_faults(list(kinds))

    def stop(self, timeout: float = 5.0) -> None:
        self._server.should_exit = True
        self._thread.join(timeout)

    def __enter__(self) -> SimulatorHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_simulator_in_thread(host: str = "127.0.0.1", port: int = 0, **options: Any) -> SimulatorHandle:
    """Start on ``host:port`` (0 = any free port); ``options`` are ``SimulatorOptions`` fields."""
    if "faults" in options:
        options["faults"] = tuple(options["faults"])
    state = SimulatorState(SimulatorOptions(**options))
    app = create_simulator_app(state=state)
    # proto=IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on accepted sockets whose proto
    # says TCP, and without it every keep-alive response stalls ~40 ms on delayed ACKs.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=lambda: asyncio.run(server.serve(sockets=[sock])), name="llm-simulator", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("LLM simulator failed to start")
        time.sleep(0.005)
    return SimulatorHandle(server, thread, state, host, sock.getsockname()[1])
