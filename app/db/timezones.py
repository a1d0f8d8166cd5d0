"""Every timestamp the app reads is timezone-aware UTC, on SQLite as on PostgreSQL.

SQLite has no timezone type: SQLAlchemy hands back naive datetimes there, so an API read on SQLite
showed ``2026-11-30T20:30:53.835615`` where a write (and PostgreSQL) showed ``…Z``. The listeners
below mark naive ``DateTime(timezone=True)`` attributes as UTC whenever a row is loaded or
refreshed, so every response (and every comparison in Python) sees the same kind of value.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import Any

from sqlalchemy import DateTime, event, inspect

from app.db.models import Base


@cache
def _aware_columns(cls: type) -> tuple[str, ...]:
    mapper = inspect(cls)
    return tuple(
        attr.key
        for attr in mapper.column_attrs
        if any(isinstance(col.type, DateTime) and col.type.timezone for col in attr.columns)
    )


def _mark_utc(target: Any, *_: Any) -> None:
    state = target.__dict__
    for key in _aware_columns(type(target)):
        value = state.get(key)
        if isinstance(value, datetime) and value.tzinfo is None:
            state[key] = value.replace(tzinfo=UTC)


event.listen(Base, "load", _mark_utc, propagate=True)
event.listen(Base, "refresh", _mark_utc, propagate=True)
