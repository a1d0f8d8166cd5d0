"""The input boundary: rules every request passes before a handler or a decoder sees it.

Applied once, app-wide, as Litestar's ``before_request`` hook, so no endpoint can forget them and
SQLite and PostgreSQL see the same accepted input:

* **NUL characters** (``\\u0000``): PostgreSQL cannot store them in text. A path id containing one
  cannot exist (404 ``not_found``); a query parameter or a JSON string containing one is a 422
  ``invalid_character``.
* **Deeply nested JSON**: a body nested more than ``MAX_JSON_DEPTH`` levels is a 400
  ``json_too_deep``, checked on the raw bytes before any decoder recurses into it. The check runs
  on the event loop before authentication, so it is linear in the body whatever the bytes: one
  regex pass with possessive quantifiers blanks the strings (an unterminated string runs to the
  end instead of being retried from every later quote), ``bytes.translate`` keeps the brackets and
  numpy's running sum gives the depth.
* **Media type**: a non-empty body must be JSON (``application/json`` or ``…+json``); anything
  else is a 415 ``unsupported_media_type`` rather than being parsed as JSON anyway.
"""

from __future__ import annotations

import re

import numpy as np
from litestar import MediaType, Request, Response

from app.errors import AppError, NotFound, ValidationFailed

MAX_JSON_DEPTH = 32
# A string, or an unterminated one to the end of the body. Possessive (``++``, ``*+``): no
# backtracking, so each byte is looked at a bounded number of times.
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = np.zeros(256, dtype=np.int32)
_STEP[list(b"[{")] = 1
_STEP[list(b"]}")] = -1
_ESCAPED_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")
_BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


class JsonTooDeep(AppError):
    status_code = 400
    code = "json_too_deep"


class UnsupportedMediaType(AppError):
    status_code = 415
    code = "unsupported_media_type"


def json_depth(body: bytes, limit: int = MAX_JSON_DEPTH) -> int:
    """Nesting depth of a JSON text (brackets inside strings do not count); linear in ``body``.

    ``limit`` is kept for callers that only need to know whether a limit is passed; the whole
    body is measured either way, which costs one vectorised pass.
    """
    brackets = _STRING.sub(b"", body).translate(None, _NOT_BRACKET)
    if not brackets:
        return 0
    return max(int(np.cumsum(_STEP[np.frombuffer(brackets, dtype=np.uint8)]).max()), 0)


def has_nul(text: str) -> bool:
    return "\x00" in text


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def check_body(body: bytes, content_type: str | None) -> None:
    if not body.strip():
        return
    if not content_type or not _is_json(content_type):
        raise UnsupportedMediaType(
            f"request bodies must be JSON (content-type application/json), not {content_type or 'unspecified'}",
            details={"contentType": content_type},
        )
    if json_depth(body) > MAX_JSON_DEPTH:
        raise JsonTooDeep(f"JSON body is nested deeper than {MAX_JSON_DEPTH} levels", details={"maxDepth": MAX_JSON_DEPTH})
    if b"\x00" in body or _ESCAPED_NUL.search(body):
        raise ValidationFailed("text must not contain NUL (\\u0000) characters", code="invalid_character")


def _options_response(request: Request) -> Response[None] | None:
    """``OPTIONS`` answers with every method of the path.

    (Litestar's generated OPTIONS handler only lists the methods of the first controller
    registration of a path, e.g. ``Allow: OPTIONS, POST`` for ``/v1/agents``, which also has GET.)
    """
    handler_map = request.app.route_handler_method_map
    candidates = [request.scope.get("path_template"), *getattr(request.scope.get("route_handler"), "paths", ())]
    methods = next((handler_map[c] for c in candidates if c in handler_map), None)
    if not methods:
        return None
    allowed = sorted({str(m).upper() for m in methods} | {"OPTIONS"})
    return Response(content=None, status_code=204, headers={"Allow": ", ".join(allowed)}, media_type=MediaType.TEXT)


async def guard_request(request: Request) -> Response[None] | None:
    """Litestar ``before_request`` hook: raises an ``AppError`` for input no handler should see."""
    if request.method == "OPTIONS":
        return _options_response(request)
    for name, value in request.path_params.items():
        if isinstance(value, str) and has_nul(value):
            raise NotFound(f"{name} not found", details={"parameter": name})
    for name, value in request.query_params.multi_items():
        if has_nul(name) or has_nul(value):
            raise ValidationFailed(
                "query parameters must not contain NUL characters", code="invalid_character", details={"parameter": name}
            )
    if request.method in _BODY_METHODS:
        check_body(await request.body(), request.headers.get("content-type"))
    return None
