"""Make the OpenAPI document (``/schema``) tell the truth about errors and authentication.

Litestar documents only its own 400 shape (``status_code, detail, extra``), while every error
this API sends is ``ErrorBody`` (``{code, message, details?, retryable?}``) from one exception
handler. ``document_errors`` rewrites the generated document once, at start-up: every operation
lists the error statuses it can answer with that shape, ``/v1`` operations declare the bearer
token, and ``turn_in_progress`` answers document ``Retry-After``.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from litestar import Litestar
from litestar._openapi.plugin import OpenAPIPlugin

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["code", "message"],
    "properties": {
        "code": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$", "description": "public error code (README table)"},
        "message": {"type": "string"},
        "details": {"type": "object", "additionalProperties": True},
        "retryable": {"type": "boolean"},
    },
    "additionalProperties": False,
}
_DESCRIPTIONS = {
    "400": "Malformed request (invalid_json, json_too_deep, bad_request)",
    "401": "Missing, invalid or expired bearer token",
    "403": "The operation needs an admin token",
    "404": "No such resource, or not yours",
    "409": "Conflicts with the current state (e.g. turn_in_progress, with Retry-After)",
    "413": "Body or content over its limit",
    "415": "The request body is not JSON",
    "422": "A field or parameter is invalid or out of its documented range",
    "502": "The model failed or answered unusably",
    "503": "The model is not configured or unavailable (retryable says whether to retry), or the database is"
           " unreachable, read-only or full (database_unavailable, retryable, with Retry-After)",
}
_BODY_METHODS = {"post", "put", "patch", "delete"}
_MODEL_PATH_ENDS = ("/turns", "/regenerate", "/suggestions")
_PUBLIC = {"/healthz", "/readyz"}


def _ref() -> dict[str, Any]:
    return {"$ref": "#/components/schemas/ErrorBody"}


def _error_response(status: str) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": _DESCRIPTIONS[status],
        "content": {"application/json": {"schema": _ref()}},
    }
    if status in ("409", "503"):
        response["headers"] = {
            "Retry-After": {"description": "seconds until a retry can succeed", "schema": {"type": "integer"}}
        }
    return response


def _statuses(path: str, method: str) -> list[str]:
    if path in _PUBLIC:
        return []
    out = ["400", "401", "403", "404", "422"]
    if method in _BODY_METHODS:
        out += ["409", "413", "415"]
    if method == "post" and path.endswith(_MODEL_PATH_ENDS):
        out += ["502"]
    return [*out, "503"]  # any endpoint: the database may be away


_SUFFIX_MEDIA = {".csv": "text/csv", ".html": "text/html"}


def _fix_success_media_type(path: str, responses: dict[str, Any]) -> None:
    """Download endpoints (``….csv``, ``….html``) answer with their file's type, not JSON."""
    media = next((m for suffix, m in _SUFFIX_MEDIA.items() if path.endswith(suffix)), None)
    if media is None:
        return
    for status, response in responses.items():
        if status.startswith("2") and isinstance(response, dict):
            response["content"] = {media: {"schema": {"type": "string"}}}


def document_errors(schema: dict[str, Any]) -> dict[str, Any]:
    doc = deepcopy(schema)
    components = doc.setdefault("components", {})
    components.setdefault("schemas", {})["ErrorBody"] = ERROR_SCHEMA
    components.setdefault("securitySchemes", {})["bearerAuth"] = {
        "type": "http", "scheme": "bearer", "bearerFormat": "JWT",
    }  # fmt: skip
    for path, item in doc.get("paths", {}).items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            responses = operation["responses"]
            _fix_success_media_type(path, responses)
            for status in _statuses(path, method):
                responses[status] = _error_response(status)
            if path == "/readyz":
                responses["503"] = {"description": "Database unreachable or not migrated",
                                    "content": {"application/json": {"schema": {"type": "object"}}}}  # fmt: skip
            if path.startswith("/v1/") or path == "/metrics":
                operation["security"] = [{"bearerAuth": []}]
    return doc


def install(app: Litestar) -> None:
    """Replace the served document with the corrected one (call after every route is registered)."""
    plugin = app.plugins.get(OpenAPIPlugin)
    plugin._openapi_schema = document_errors(plugin.provide_openapi().to_schema())  # noqa: SLF001
