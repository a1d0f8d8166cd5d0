"""Liveness and readiness probes (no auth)."""

from __future__ import annotations

from typing import Any

from litestar import Response, get
from litestar.datastructures import State
from sqlalchemy import text

from app.db.outage import cannot_write
from app.db.migrate import current_revision, head_revision


@get("/healthz", tags=["health"])
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


def model_states(state: State) -> list[dict[str, str]]:
    """Each model config with its circuit breaker: ``closed`` | ``open`` | ``half_open``."""
    states: Any = getattr(getattr(state, "model", None), "circuit_states", None)
    if not callable(states):  # a fake model in tests, or no gateway yet
        return []
    return [{"id": config_id, "circuit": circuit} for config_id, circuit in states().items()]


@get("/readyz", tags=["health"])
async def readyz(state: State) -> Response[dict[str, object]]:
    """Ready when the database answers, can take writes (not read-only, a SQLite disk not full)
    and its schema is at the newest migration.

    ``models`` lists each model config's circuit breaker for operators; an open breaker does
    not make the process unready: turns still run (stages fall back, or fail fast with
    ``model_unavailable``), and taking replicas out of a load balancer would not bring a
    model back. The database alone decides readiness."""
    models = model_states(state)
    try:
        async with state.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
        revision = await current_revision(state.engine)
        cannot = await cannot_write(state.engine)
    except Exception as exc:  # noqa: BLE001 - any database failure means "not ready"
        return Response({"status": "unavailable", "database": f"unreachable: {type(exc).__name__}", "models": models},
                        status_code=503)  # fmt: skip
    if cannot is not None:  # it answers reads but would refuse every write (read-only, full)
        return Response({"status": "unavailable", "database": cannot, "models": models}, status_code=503)
    head = head_revision()
    if revision != head:
        return Response(
            {"status": "unavailable", "database": "not migrated", "revision": revision, "head": head, "models": models},
            status_code=503,
        )
    return Response({"status": "ok", "database": "ok", "revision": revision, "models": models}, status_code=200)
