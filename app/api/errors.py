"""One place where errors become HTTP responses: ``{"code", "message", "details"?}``."""

from __future__ import annotations

import logging

from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, ValidationException

from app.api.schemas import ErrorBody
from app.db.outage import as_unavailable
from app.errors import AppError

log = logging.getLogger("app.errors")

_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_failed",
    429: "rate_limited",
    503: "unavailable",
}


def _respond(status: int, body: ErrorBody, headers: dict[str, str] | None = None) -> Response[ErrorBody]:
    return Response(body, status_code=status, media_type=MediaType.JSON, headers=headers)


def app_error_handler(_: Request, exc: AppError) -> Response[ErrorBody]:
    if exc.status_code >= 500:
        log.warning("%s: %s", exc.code, exc.message)
    headers = None
    if retry_after := exc.details.get("retryAfterS"):
        headers = {"Retry-After": str(retry_after)}
    return _respond(
        exc.status_code,
        ErrorBody(
            code=exc.code,
            message=exc.message,
            details=exc.details or None,
            retryable=True if exc.retryable else None,
        ),
        headers,
    )


def validation_error_handler(_: Request, exc: ValidationException) -> Response[ErrorBody]:
    """Litestar raises this for bodies and parameters that fail decoding.

    Syntactically broken JSON is a 400; a well-formed body with wrong fields or values is a 422.
    """
    extra = exc.extra if isinstance(exc.extra, list) else []
    text = " ".join(str(e.get("message", "")) for e in extra if isinstance(e, dict)) + " " + str(exc.detail)
    malformed = "malformed" in text.lower() or "json is malformed" in text.lower()
    status, code = (400, "invalid_json") if malformed else (422, "validation_failed")
    problems = [
        {"field": str(e.get("key", "")), "problem": str(e.get("message", ""))} for e in extra if isinstance(e, dict)
    ]
    message = "; ".join(f"{p['field']}: {p['problem']}" if p["field"] else p["problem"] for p in problems)
    return _respond(status, ErrorBody(code=code, message=message or str(exc.detail), details={"problems": problems}))


def http_error_handler(_: Request, exc: HTTPException) -> Response[ErrorBody]:
    status = exc.status_code
    code = _HTTP_CODES.get(status, "http_error")
    detail = str(exc.detail)
    if status == 400 and any(w in detail.lower() for w in ("truncated", "malformed", "json", "decode")):
        code = "invalid_json"
    return _respond(status, ErrorBody(code=code, message=detail), exc.headers)


def internal_error_handler(request: Request, exc: Exception) -> Response[ErrorBody]:
    if (unavailable := as_unavailable(exc)) is not None:  # not a bug: the database is away or cannot write
        log.warning("database unavailable (%s): %s", unavailable.details["reason"], exc)
        return app_error_handler(request, unavailable)
    log.exception("unhandled error", exc_info=exc)
    return _respond(500, ErrorBody(code="internal_error", message="internal server error"))


EXCEPTION_HANDLERS = {
    AppError: app_error_handler,
    ValidationException: validation_error_handler,
    HTTPException: http_error_handler,
    Exception: internal_error_handler,
}
