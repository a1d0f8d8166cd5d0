"""Filters shared by every analytics query, the CLI and the HTTP API.

One parser (``parse_filters``) turns strings (``since=7d``, ISO dates, comma lists) into a
``Filters`` Struct, so the CLI and HTTP accept exactly the same spellings and reject the same
mistakes with a ``FilterError`` naming the field.

Meaning, applied by ``analytics.queries.sql``:

- ``since``/``until``: ``created_at`` of the row the query reads, half-open ``[since, until)``.
- ``conversation_ids``/``agent_ids``: rows of those conversations / agents; for per-turn figures
  (emotions, LLM agreement, ...) ``agent_ids`` means "turns where that agent was a candidate".
- ``selected_by``: turns *decided* that way (``speaker_decisions.decided_by``), so a turn's
  candidates are kept together and selection rates stay meaningful.
- ``kind``: conversation kind (``direct`` | ``group``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

import msgspec

SELECTED_BY = ("mention", "llm", "fallback", "direct", "order")
KINDS = ("direct", "group")
_RELATIVE = re.compile(r"^(\d+)([mhdw])$")
_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
MAX_LOOKBACK_S = 100 * 366 * 86400  # a relative filter reaches back at most ~100 years
MIN_TIME = datetime(1970, 1, 1, tzinfo=UTC)  # absolute filters: a range both databases compare exactly
MAX_TIME = datetime(9999, 1, 1, tzinfo=UTC)


class FilterError(ValueError):
    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"invalid filter {field}: {problem}")
        self.field = field
        self.problem = problem


class Filters(msgspec.Struct, frozen=True, kw_only=True):
    since: datetime | None = None
    until: datetime | None = None
    conversation_ids: tuple[str, ...] = ()
    agent_ids: tuple[str, ...] = ()
    selected_by: tuple[str, ...] = ()
    kind: str | None = None


def parse_time(field: str, text: str, now: datetime) -> datetime:
    """``7d`` / ``12h`` / ``30m`` / ``2w`` before ``now``, or an ISO date/datetime (UTC if naive).

    Relative filters reach back at most ~100 years and absolute ones lie in 1970..9999, so no
    filter overflows a date (a ``FilterError``, i.e. a 422 ``invalid_filter``, instead)."""
    text = text.strip()
    match = _RELATIVE.match(text)
    if match:
        seconds = int(match.group(1)) * _UNITS[match.group(2)]
        if seconds > MAX_LOOKBACK_S:
            raise FilterError(field, f"{text!r} reaches back more than {MAX_LOOKBACK_S // 86400} days")
        return now - timedelta(seconds=seconds)
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except (ValueError, OverflowError):
        raise FilterError(field, f"{text!r} is neither a duration like 7d/12h/30m nor an ISO date") from None
    if not MIN_TIME <= value <= MAX_TIME:
        raise FilterError(field, f"{text!r} is outside {MIN_TIME.year}..{MAX_TIME.year}")
    return value


def _ids(values: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    if values is None:
        return ()
    items = [values] if isinstance(values, str) else list(values)
    return tuple(dict.fromkeys(part.strip() for item in items for part in item.split(",") if part.strip()))


def parse_filters(
    *,
    since: str | None = None,
    until: str | None = None,
    conversation: str | list[str] | tuple[str, ...] | None = None,
    agent: str | list[str] | tuple[str, ...] | None = None,
    selected_by: str | list[str] | tuple[str, ...] | None = None,
    kind: str | None = None,
    now: datetime | None = None,
) -> Filters:
    now = now or datetime.now(UTC)
    start = parse_time("since", since, now) if since else None
    end = parse_time("until", until, now) if until else None
    if start and end and start >= end:
        raise FilterError("until", f"must be after since ({start.isoformat()})")
    how = _ids(selected_by)
    bad = [v for v in how if v not in SELECTED_BY]
    if bad:
        raise FilterError("selectedBy", f"unknown value(s) {', '.join(bad)}; expected {'|'.join(SELECTED_BY)}")
    if kind is not None and kind not in KINDS:
        raise FilterError("kind", f"{kind!r}; expected {'|'.join(KINDS)}")
    return Filters(
        since=start, until=end, conversation_ids=_ids(conversation), agent_ids=_ids(agent), selected_by=how, kind=kind
    )


FILTER_PARAMS = ("since", "until", "conversation", "agent", "selectedBy", "kind")


def filters_from_params(params: Mapping[str, list[str]], now: datetime | None = None) -> Filters:
    """HTTP query parameters (multi-valued) → Filters; unknown parameters are an error."""
    unknown = sorted(set(params) - set(FILTER_PARAMS))
    if unknown:
        raise FilterError(unknown[0], f"unknown parameter; expected one of {', '.join(FILTER_PARAMS)}")

    def one(name: str) -> str | None:
        values = params.get(name) or []
        if len(values) > 1:
            raise FilterError(name, "given more than once")
        return values[0] if values else None

    return parse_filters(
        since=one("since"), until=one("until"), conversation=params.get("conversation"),
        agent=params.get("agent"), selected_by=params.get("selectedBy"), kind=one("kind"), now=now,
    )
