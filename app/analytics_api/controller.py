"""``GET /v1/analytics/{query}``: the same rows as ``companion analytics <query> --format json``.

Admin only. Filters are query parameters (``since=7d`` or ISO, ``until``, ``conversation``,
``agent``, ``selectedBy``, ``kind``; lists repeat or comma-separate). An unknown query is a 404
``unknown_query``; a bad filter a 422 ``invalid_filter`` naming the parameter.
"""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import FilterError, filters_from_params
from analytics.queries import QUERIES
from app.auth.tokens import Principal
from app.errors import NotFound, ValidationFailed


class AnalyticsController(Controller):
    path = "/v1/analytics"
    tags = ["analytics"]

    @get("/")
    async def list_queries(self, principal: Principal) -> list[dict[str, str]]:
        principal.require_admin()
        return [{"name": q.name, "summary": q.summary} for q in QUERIES.values()]

    @get("/{name:str}")
    async def run(self, name: str, request: Request, session: AsyncSession, principal: Principal) -> list[Any]:
        principal.require_admin()
        found = QUERIES.get(name)
        if found is None:
            raise NotFound(f"unknown analytics query {name!r}", code="unknown_query",
                           details={"query": name, "known": sorted(QUERIES)})
        params = {key: request.query_params.getall(key) for key in request.query_params}
        try:
            filters = filters_from_params(params)
        except FilterError as exc:
            raise ValidationFailed(str(exc), code="invalid_filter", details={"parameter": exc.field}) from None
        return await found.run(session, filters)
