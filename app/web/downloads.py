"""Admin downloads: ``GET /v1/reports/analytics.html`` (the ``companion analytics report`` file) and
``GET /v1/reports/decisions.csv`` (``companion analytics export decisions``), with the same filters
as ``/v1/analytics/{query}`` (``since=30d``, ``until``, ``conversation``, ``agent``, ...)."""

from __future__ import annotations

import io

from litestar import Controller, MediaType, Request, Response, get
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import FilterError, Filters, filters_from_params
from app.auth.tokens import Principal
from app.errors import ValidationFailed


def _filters(request: Request) -> Filters:
    params = {key: request.query_params.getall(key) for key in request.query_params}
    try:
        return filters_from_params(params)
    except FilterError as exc:
        raise ValidationFailed(str(exc), code="invalid_filter", details={"parameter": exc.field}) from None


class DownloadController(Controller):
    path = "/v1/reports"
    tags = ["analytics"]

    @get("/analytics.html", media_type=MediaType.HTML)
    async def report(self, request: Request, session: AsyncSession, principal: Principal) -> Response[str]:
        principal.require_admin()
        from analytics.report import build_report

        html = await build_report(session, _filters(request))
        return Response(html, headers={"content-disposition": 'attachment; filename="analytics-report.html"'})

    @get("/decisions.csv", media_type="text/csv; charset=utf-8")
    async def decisions(self, request: Request, session: AsyncSession, principal: Principal) -> Response[str]:
        principal.require_admin()
        from analytics.export import export_decisions

        out = io.StringIO()
        await export_decisions(session, _filters(request), out)
        return Response(out.getvalue(), headers={"content-disposition": 'attachment; filename="decisions.csv"'})
