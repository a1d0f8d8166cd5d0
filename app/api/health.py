"""Liveness and readiness probes (no auth)."""

from __future__ import annotations

from litestar import Response, get
from litestar.datastructures import State
from sqlalchemy import text

from app.db.migrate import current_revision, head_revision


@get("/healthz", tags=["health"])
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get("/readyz", tags=["health"])
async def readyz(state: State) -> Response[dict[str, object]]:
    """Ready when the database answers and its schema is at the newest migration."""
    try:
        async with state.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
        revision = await current_revision(state.engine)
    except Exception as exc:  # noqa: BLE001 - any database failure means "not ready"
        return Response({"status": "unavailable", "database": f"unreachable: {type(exc).__name__}"}, status_code=503)
    head = head_revision()
    if revision != head:
        return Response(
            {"status": "unavailable", "database": "not migrated", "revision": revision, "head": head}, status_code=503
        )
    return Response({"status": "ok", "database": "ok", "revision": revision}, status_code=200)
