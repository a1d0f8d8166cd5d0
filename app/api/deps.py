"""Litestar dependencies: a database session per request and the verified principal."""

from __future__ import annotations

from collections.abc import AsyncIterator

from litestar import Request
from litestar.datastructures import State
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.tokens import Principal, principal_from_header


async def provide_session(state: State) -> AsyncIterator[AsyncSession]:
    async with state.sessions() as session:
        yield session


def provide_principal(request: Request, state: State) -> Principal:
    return principal_from_header(state.settings.jwt_secret, request.headers.get("authorization"))
