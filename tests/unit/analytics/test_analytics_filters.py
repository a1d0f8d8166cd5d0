from __future__ import annotations

from datetime import UTC, datetime

import pytest

from analytics.filters import FilterError, filters_from_params, parse_filters

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def test_relative_since_counts_back_from_now() -> None:
    assert parse_filters(since="7d", now=NOW).since == datetime(2026, 2, 22, 12, 0, tzinfo=UTC)
    assert parse_filters(since="12h", now=NOW).since == datetime(2026, 3, 1, 0, 0, tzinfo=UTC)


def test_iso_dates_are_utc_when_naive() -> None:
    f = parse_filters(since="2026-01-01", until="2026-01-02T06:00:00+02:00", now=NOW)
    assert f.since == datetime(2026, 1, 1, tzinfo=UTC)
    assert f.until == datetime(2026, 1, 2, 4, 0, tzinfo=UTC)


def test_lists_accept_repeats_and_commas() -> None:
    f = parse_filters(agent=["a,b", "c"], conversation="x", selected_by="llm,fallback", now=NOW)
    assert (f.agent_ids, f.conversation_ids, f.selected_by) == (("a", "b", "c"), ("x",), ("llm", "fallback"))


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"since": "yesterday"}, "since"),
    ({"since": "1d", "until": "2d"}, "until"),
    ({"selected_by": "magic"}, "selectedBy"),
    ({"kind": "party"}, "kind"),
])
def test_bad_filters_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(FilterError) as err:
        parse_filters(now=NOW, **kwargs)
    assert err.value.field == field


def test_http_params_reject_unknown_and_repeated_single_values() -> None:
    with pytest.raises(FilterError, match="unknown parameter"):
        filters_from_params({"sinse": ["7d"]}, now=NOW)
    with pytest.raises(FilterError, match="more than once"):
        filters_from_params({"since": ["7d", "8d"]}, now=NOW)
    assert filters_from_params({"selectedBy": ["llm"], "agent": ["a", "b"]}, now=NOW).agent_ids == ("a", "b")
