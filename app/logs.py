"""Logging set-up: readable text by default, one JSON object per line with
``COMPANION_LOG_FORMAT=json``; every line logged while a turn runs carries its ``turnId`` and
``conversationId`` (from a context variable, so tasks the turn starts inherit it).

Third-party chatter is kept out of ``companion serve`` and ``companion demo`` output: httpx's
per-request INFO lines, the OpenAI client's retries and Alembic's migration set-up lines are only
shown at WARNING and above (``COMPANION_LOG_LEVEL=DEBUG`` shows them again).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

_CONTEXT: contextvars.ContextVar[dict[str, str]] = contextvars.ContextVar("companion_log_context", default={})
QUIET = ("httpx", "httpcore", "openai", "alembic", "alembic.runtime.migration", "aiosqlite", "asyncio", "matplotlib")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s%(context)s"


@contextlib.contextmanager
def log_context(**fields: str) -> Iterator[None]:
    """``with log_context(turnId=…, conversationId=…):`` every log line inside carries them."""
    token = _CONTEXT.set({**_CONTEXT.get(), **{k: v for k, v in fields.items() if v}})
    try:
        yield
    finally:
        _CONTEXT.reset(token)


class ContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        fields = _CONTEXT.get()
        record.log_context = fields
        record.context = "".join(f" {k}={v}" for k, v in fields.items()) if fields else ""
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat().replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        out.update(getattr(record, "log_context", None) or _CONTEXT.get())
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


def configure_logging(level: str | None = None, fmt: str | None = None) -> None:
    """Idempotent: replaces the root handler (CLI start, then again once settings are known)."""
    level = (level or os.environ.get("COMPANION_LOG_LEVEL") or "INFO").upper()
    fmt = (fmt or os.environ.get("COMPANION_LOG_FORMAT") or "text").lower()
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(ContextFilter())
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level if level in {"DEBUG", "INFO", "WARNING", "ERROR"} else "INFO")
    quiet_level = logging.DEBUG if level == "DEBUG" else logging.WARNING
    for name in QUIET:
        logging.getLogger(name).setLevel(quiet_level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):  # one format for the server's own lines too
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
