"""``/`` (the client's page), ``/web/*`` (its assets), ``/web/config.json`` (what the page may offer)
and the admin downloads (the analytics HTML report and the decisions CSV)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar import MediaType, Request, Response, get
from litestar.response import File
from litestar.datastructures import CacheControlHeader, State
from litestar.static_files import create_static_files_router

from app.auth.dev_tokens import dev_token
from app.errors import NotFound
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


# The page's CJK font (issue 29): Noto Sans CJK from the ``noto-cjk-sans-otc`` dependency (SIL OFL
# 1.1), so Chinese shows on a machine with no Chinese font; the stylesheet names local fonts first and
# limits it to CJK characters (unicode-range), so a browser that has one never downloads this file.
FONT_CACHE = CacheControlHeader(max_age=30 * 24 * 3600, public=True)


def _cjk_font() -> Path | None:
    try:
        from noto_cjk_sans_otc import FONT_PATH
    except ImportError:  # pragma: no cover - a dependency; the page then relies on the system's fonts
        return None
    return Path(str(FONT_PATH))


@get("/web/fonts/cjk.ttc", include_in_schema=False, cache_control=FONT_CACHE)
async def cjk_font() -> File:
    path = _cjk_font()
    if path is None or not path.is_file():
        raise NotFound("no CJK font is installed (pip install noto-cjk-sans-otc)", code="font_not_installed")
    return File(path, media_type="font/collection", filename="cjk.ttc", content_disposition_type="inline")


assets = create_static_files_router(path="/web", directories=[STATIC], name="web", cache_control=NO_CACHE)

route_handlers: list[Any] = [index, client_config, cjk_font, assets, dev_token, DownloadController]
