"""``GET /v1/analytics/{query}``: the same rows as ``companion analytics <query> --format json``.

Admin only. Filters are query parameters (``since=7d`` or ISO, ``until``, ``conversation``,
``agent``, ``selectedBy``, ``kind``; lists repeat or comma-separate). An unknown query is a 404
``unknown_query``; a bad filter a 422 ``invalid_filter`` naming the parameter.
"""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, get
from litestar.params import Parameter, QueryParameter
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import FilterError, filters_from_params
from analytics.queries import QUERIES
from app.auth.tokens import Principal
from app.errors import NotFound, ValidationFailed


_TIME = "a duration back from now (7d, 12h, 30m, 2w; at most ~100 years) or an ISO date/datetime (UTC if naive)"


class AnalyticsController(Controller):
    path = "/v1/analytics"
    tags = ["analytics"]

    @get("/")
    async def list_queries(self, principal: Principal) -> list[dict[str, str]]:
        principal.require_admin()
        return [{"name": q.name, "summary": q.summary} for q in QUERIES.values()]

    @get("/{name:str}")
    async def run(
        self,
        name: str,
        request: Request,
        session: AsyncSession,
        principal: Principal,
        since: Annotated[str | None, Parameter(description=_TIME)] = None,
        until: Annotated[str | None, Parameter(description=_TIME)] = None,
        conversation: Annotated[list[str] | None, Parameter(description="conversation ids (repeat or comma-separate)")] = None,
        agent: Annotated[list[str] | None, Parameter(description="agent ids (repeat or comma-separate)")] = None,
        selected_by: Annotated[
            list[str] | None, QueryParameter(name="selectedBy", description="mention | llm | fallback | direct")
        ] = None,
        kind: Annotated[str | None, Parameter(description="conversation kind: direct | group")] = None,
    ) -> list[Any]:
        """The filters are documented here; they are parsed once, by ``analytics.filters`` (as for the CLI)."""
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
