"""``POST /v1/dev/token``: a bearer token for any user name, for local development only.

Off unless ``COMPANION_DEV_TOKENS=1`` (TOML ``auth.devTokens = true``); when off the route answers
404 as if it did not exist. The web client shows its "get a dev token" button only when
``GET /web/config.json`` says the route is on.
"""

from __future__ import annotations

from typing import Annotated

from litestar import post
from litestar.datastructures import State
from msgspec import Meta

from app.api.schemas import ApiInput, ApiStruct
from app.auth.tokens import issue_token
from app.errors import NotFound

DEV_TOKEN_TTL_S = 12 * 3600


class DevTokenCreate(ApiInput):
    user: Annotated[str, Meta(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.@-]+$")]
    admin: bool = False


class DevToken(ApiStruct):
    token: str
    user: str
    admin: bool
    expires_in_s: int


@post("/v1/dev/token", tags=["auth"], status_code=201)
async def dev_token(data: DevTokenCreate, state: State) -> DevToken:
    if not state.settings.dev_tokens:
        raise NotFound("dev tokens are off (set COMPANION_DEV_TOKENS=1 in development)", code="not_found")
    token = issue_token(state.settings.jwt_secret, data.user, admin=data.admin, ttl_s=DEV_TOKEN_TTL_S)
    return DevToken(token=token, user=data.user, admin=data.admin, expires_in_s=DEV_TOKEN_TTL_S)
