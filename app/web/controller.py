"""``/`` (the client's page), ``/web/*`` (its assets), ``/web/config.json`` (what the page may offer)
and the admin downloads (the analytics HTML report and the decisions CSV)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar import MediaType, Request, Response, get
from litestar.datastructures import CacheControlHeader, State
from litestar.static_files import create_static_files_router

from app.auth.dev_tokens import dev_token
from app.web.downloads import DownloadController

STATIC = Path(__file__).parent / "static"
NO_CACHE = CacheControlHeader(no_cache=True)  # a new server version is picked up on reload


@get("/", include_in_schema=False, cache_control=NO_CACHE)
async def index() -> Response[bytes]:
    return Response((STATIC / "index.html").read_bytes(), media_type=MediaType.HTML)


@get("/web/config.json", include_in_schema=False, cache_control=NO_CACHE)
async def client_config(state: State, request: Request) -> dict[str, Any]:
    limits = state.settings.limits
    return {"devTokens": state.settings.dev_tokens, "maxMessageChars": limits.max_message_chars,
            "maxGroupMembers": limits.max_group_members, "minGroupMembers": limits.min_group_members}  # fmt: skip


assets = create_static_files_router(path="/web", directories=[STATIC], name="web", cache_control=NO_CACHE)

route_handlers: list[Any] = [index, client_config, assets, dev_token, DownloadController]
