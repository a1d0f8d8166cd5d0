"""Every query against the hand-built history in conftest.py, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from analytics.filters import Filters, parse_filters
from analytics.queries import QUERIES

NOW = datetime.fromisoformat("2026-02-01T00:00:00+00:00")


async def run(sessions: Any, name: str, **filters: Any) -> list[Any]:
    async with sessions() as session:
        return await QUERIES[name].run(session, parse_filters(now=NOW, **filters))


def pick(rows: list[Any], *fields: str) -> list[tuple]:
    return [tuple(getattr(r, f) for f in fields) for r in rows]


async def test_speaking_share_counts_candidates_selections_and_share(history: Any) -> None:
    rows = await run(history, "speaking-share")
    assert pick(rows, "agent_id", "agent_name", "candidate_turns", "selected", "share") == [
        ("A", "Ann", 5, 4, 0.8), ("B", "Bo", 4, 1, 0.2), ("C", "Cy", 3, 0, 0.0)]
    assert rows[0].selection_rate == 0.8


async def test_speaking_dominance_gives_largest_share_and_gini_per_conversation(history: Any) -> None:
    rows = await run(history, "speaking-dominance")
    assert pick(rows, "conversation_id", "agents", "selections", "dominance", "gini") == [
        ("g1", 3, 3, 1.0, 0.666667), ("d1", 1, 1, 1.0, 0.0), ("g2", 2, 1, 1.0, 0.5)]


async def test_selected_by_counts_how_speakers_were_chosen_per_day(history: Any) -> None:
    rows = await run(history, "selected-by")
    assert pick(rows, "day", "selected_by", "count", "share") == [
        ("2026-01-10", "fallback", 1, 0.5), ("2026-01-10", "llm", 1, 0.5),
        ("2026-01-11", "llm", 1, 0.5), ("2026-01-11", "mention", 1, 0.5), ("2026-01-12", "direct", 1, 1.0)]


async def test_emotions_count_each_turn_once_per_day(history: Any) -> None:
    rows = await run(history, "emotions")
    assert pick(rows, "day", "primary_emotion", "turns", "share", "needs_comfort", "needs_deescalation", "from_fallback") == [
        ("2026-01-10", "neutral", 1, 0.5, 0, 0, 1), ("2026-01-10", "sad", 1, 0.5, 1, 0, 0),
        ("2026-01-11", "angry", 1, 0.5, 1, 1, 0), ("2026-01-11", "happy", 1, 0.5, 0, 0, 0),
        ("2026-01-12", "sad", 1, 1.0, 1, 0, 1)]


async def test_emotion_routing_rates_by_need_capability_and_stage(history: Any) -> None:
    rows = await run(history, "emotion-routing")
    cells = {(r.need, r.capability): (r.candidates, r.selected, r.rate) for r in rows if r.dimension == "need_capability"}
    assert cells[("comfort", "all")] == (7, 3, 0.428571)
    assert cells[("comfort", "comfort")] == (3, 3, 1.0)
    assert cells[("comfort", "analysis")] == (2, 0, 0.0)
    assert cells[("comfort", "deescalation")] == (0, 0, None)
    assert cells[("deescalation", "all")] == (3, 1, 0.333333)
    assert cells[("none", "all")] == (5, 2, 0.4)
    assert cells[("advice", "all")] == (0, 0, None)
    stages = pick([r for r in rows if r.dimension == "relationship_stage"], "stage", "candidates", "selected")
    assert stages == [("close_bond", 5, 4), ("new_connection", 3, 0), ("trusted", 4, 1)]


async def test_llm_agreement_measures_top1_and_rank_correlation(history: Any) -> None:
    rows = await run(history, "llm-agreement")
    assert pick(rows, "weights_version", "turns", "top1_agreement", "top1_rate", "ranked_turns", "rank_correlation",
                "mean_pick_rank") == [("w1", 2, 1, 0.5, 2, 0.5, 1.5)]


async def test_cross_replies_rate_per_day(history: Any) -> None:
    rows = await run(history, "cross-replies")
    assert pick(rows, "day", "turns", "primary_replies", "cross_replies", "cross_rate", "turns_with_cross") == [
        ("2026-01-10", 2, 2, 0, 0.0, 0), ("2026-01-11", 2, 2, 1, 0.5, 1), ("2026-01-12", 1, 1, 0, 0.0, 0)]


async def test_quality_failures_by_reason_per_reply(history: Any) -> None:
    rows = await run(history, "quality")
    assert pick(rows, "reason", "reply_kind", "regenerated", "dropped", "total", "replies", "rate") == [
        ("too_long", "primary", 1, 1, 2, 6, 0.333333), ("off_persona", "cross", 0, 1, 1, 6, 0.166667)]


async def test_latency_uses_nearest_rank_percentiles(history: Any) -> None:
    rows = await run(history, "latency")
    assert pick(rows, "stage", "calls", "mean_ms", "p50_ms", "p95_ms", "max_ms", "fallbacks") == [
        ("actor", 4, 250.0, 200.0, 400.0, 400.0, 0), ("emotion", 2, 60.0, 50.0, 70.0, 70.0, 1)]


async def test_usage_tokens_per_turn_by_stage(history: Any) -> None:
    rows = await run(history, "usage")
    assert pick(rows, "stage", "turns", "calls", "input_tokens", "output_tokens", "input_per_turn", "estimated_share") == [
        ("actor", 4, 4, 100, 20, 25.0, 0.25), ("emotion", 2, 2, 0, 0, 0.0, 0.0)]


async def test_suggestion_outcome_rates(history: Any) -> None:
    [row] = await run(history, "suggestions")
    assert (row.generated, row.first_try_valid, row.repaired, row.failed, row.fallback, row.cleared) == (5, 1, 1, 1, 1, 1)
    assert row.first_try_rate == 0.2


async def test_since_filter_keeps_later_rows_only(history: Any) -> None:
    rows = await run(history, "speaking-share", since="2026-01-11")
    assert pick(rows, "agent_id", "candidate_turns", "selected") == [("A", 3, 2), ("B", 2, 1), ("C", 1, 0)]


async def test_until_is_exclusive(history: Any) -> None:
    rows = await run(history, "selected-by", until="2026-01-11")
    assert {r.day for r in rows} == {"2026-01-10"}


async def test_conversation_agent_kind_and_selected_by_filters(history: Any) -> None:
    assert pick(await run(history, "speaking-share", conversation="g2"), "agent_id", "candidate_turns", "selected") == [
        ("A", 1, 0), ("B", 1, 1)]
    assert pick(await run(history, "speaking-share", agent="C"), "agent_id", "candidate_turns") == [("C", 3)]
    assert pick(await run(history, "speaking-share", kind="direct"), "agent_id", "selected") == [("A", 1)]
    assert pick(await run(history, "speaking-share", selected_by="llm"), "agent_id", "candidate_turns", "selected") == [
        ("A", 2, 2), ("B", 2, 0), ("C", 2, 0)]
    emotions = await run(history, "emotions", agent="C")
    assert sum(r.turns for r in emotions) == 3  # turns where C was a candidate
    assert [r.total for r in await run(history, "quality", agent="B")] == [1]
    assert [r.calls for r in await run(history, "latency", selected_by="fallback")] == [1, 1]
    assert [r.generated for r in await run(history, "suggestions", agent="B")] == [1]


@pytest.mark.parametrize("name", sorted(QUERIES))
async def test_every_query_returns_no_rows_for_an_empty_range(history: Any, name: str) -> None:
    assert await run(history, name, since="2030-01-01") == []


@pytest.mark.parametrize("name", sorted(QUERIES))
async def test_every_query_works_on_an_empty_database(engine: Any, name: str) -> None:
    from app.db.engine import session_factory

    async with session_factory(engine)() as session:
        assert await QUERIES[name].run(session, Filters()) == []


async def test_selection_paths_give_agreement_and_reply_outcomes_per_mode_and_path(history: Any) -> None:
    rows = await run(history, "selection-paths")
    assert pick(rows, "mode", "path", "turns", "share", "mean_margin", "compared", "agreed", "agreement_rate") == [
        ("hybrid", "llm", 1, 0.2, 0.5, 1, 1, 1.0), ("hybrid", "mention", 1, 0.2, None, 0, 0, None),
        ("llm", "fallback", 1, 0.2, 1.5, 0, 0, None), ("llm", "llm", 1, 0.2, 0.2, 1, 0, 0.0),
        ("unrecorded", "unrecorded", 1, 0.2, None, 0, 0, None)]
    # t3's cross reply (kept, and another dropped) is not a routing outcome; t4's B was dropped once
    assert pick(rows, "path", "speakers", "replies_kept", "replies_dropped", "kept_rate", "failed_turns") == [
        ("llm", 1, 1, 0, 1.0, 0), ("mention", 1, 1, 1, 1.0, 0), ("fallback", 1, 1, 0, 1.0, 0),
        ("llm", 1, 1, 0, 1.0, 0), ("unrecorded", 1, 1, 0, 1.0, 0)]


async def test_selection_paths_keep_whole_turns_under_the_agent_filter(history: Any) -> None:
    rows = await run(history, "selection-paths", agent="C")  # C is a candidate of t1..t3 only
    assert pick(rows, "mode", "path", "turns", "speakers") == [
        ("hybrid", "llm", 1, 1), ("llm", "fallback", 1, 1), ("llm", "llm", 1, 1)]


async def test_turn_cost_averages_calls_and_tokens_per_orchestration_mode(history: Any) -> None:
    from app.db.models import Turn

    def cost(mode: str, calls: int, before: int | None, inp: int, out: int, late: bool) -> dict[str, Any]:
        return {"orchestration": {"cost": {"orchestration": mode, "modelCalls": calls, "callsBeforeFirstToken": before,
                                           "inputTokens": inp, "outputTokens": out, "includesLate": late}}}  # fmt: skip

    at = datetime.fromisoformat("2026-01-13T00:00:00+00:00")
    async with history() as session:
        session.add_all([
            Turn(id="c1", conversation_id="g1", owner_id="u", status="completed", created_at=at,
                 result=cost("combined", 4, 1, 900, 120, True)),
            Turn(id="c2", conversation_id="g1", owner_id="u", status="completed", created_at=at,
                 result=cost("combined", 6, 1, 1100, 180, False)),
            Turn(id="s1", conversation_id="g2", owner_id="u", status="completed", created_at=at,
                 result=cost("staged", 8, 3, 2000, 300, True)),
            Turn(id="o1", conversation_id="g2", owner_id="u", status="completed", created_at=at, result={"status": "completed"}),
        ])  # fmt: skip
        await session.commit()
    rows = await run(history, "turn-cost")
    assert pick(rows, "mode", "turns", "calls_per_turn", "calls_before_first_token", "input_tokens_per_turn",
                "output_tokens_per_turn", "late_included_share") == [
        ("combined", 2, 5.0, 1.0, 1000.0, 150.0, 0.5), ("staged", 1, 8.0, 3.0, 2000.0, 300.0, 1.0),
        ("unrecorded", 1, None, None, None, None, 0.0)]  # fmt: skip
    only_g1 = await run(history, "turn-cost", conversation=["g1"])
    assert pick(only_g1, "mode", "turns") == [("combined", 2)]


async def test_message_controls_count_per_agent_with_rates_per_visible_reply(history: Any) -> None:
    from app.db.models import ConversationControl as CC, Message

    at = datetime.fromisoformat("2026-01-12T00:00:00+00:00")
    async with history() as session:
        session.add_all([
            CC(conversation_id="g1", kind="regenerate", agent_id="A", message_id="t1m1", created_at=at),
            CC(conversation_id="g1", kind="select", agent_id="A", message_id="t1m1", details={"from": 2, "to": 1, "back": True},
               created_at=at),
            CC(conversation_id="g1", kind="select", agent_id="C", message_id="t3m2", details={"from": 1, "to": 2, "back": False},
               created_at=at),
            CC(conversation_id="g1", kind="cancel", turn_id="t3", created_at=at),  # A was selected, C saved a reply
            CC(conversation_id="g2", kind="cancel", turn_id="nobody", created_at=at),  # stopped before anyone was chosen
            CC(conversation_id="g1", kind="rewind", message_id="t1m0", details={"removedByAgent": {"A": 2, "B": 1}},
               created_at=at),
        ])  # fmt: skip
        (await session.get(Message, "t2m1")).hidden_at = at  # a rewound reply is not a reply any more
        await session.commit()

    fields = ("scope", "agent_id", "agent_name", "replies", "regenerations", "swipes", "swipes_back", "rewinds",
              "rewound_replies", "stops")  # fmt: skip
    rows = await run(history, "message-controls")
    assert pick(rows, *fields) == [
        ("agent", "A", "Ann", 3, 1, 1, 1, 1, 2, 1),
        ("agent", "B", "Bo", 1, 0, 0, 0, 1, 1, 0),
        ("agent", "C", "Cy", 1, 0, 1, 0, 0, 0, 1),
        ("all", None, None, 5, 1, 2, 1, 1, 3, 2),
    ]
    assert pick(rows[:1], "regenerate_rate", "swipe_back_rate", "rewind_rate", "stop_rate") == [(0.333333,) * 4]

    by_llm = await run(history, "message-controls", selected_by="llm")  # turns t1 and t3
    assert pick(by_llm, *fields) == [
        ("agent", "A", "Ann", 2, 1, 1, 1, None, None, 1),
        ("agent", "C", "Cy", 1, 0, 1, 0, None, None, 1),
        ("all", None, None, 3, 1, 2, 1, None, None, 1),
    ]
    only_c = await run(history, "message-controls", agent="C")
    assert pick(only_c, *fields) == [("agent", "C", "Cy", 1, 0, 1, 0, 0, 0, 1), ("all", None, None, 1, 0, 1, 0, 0, 0, 1)]
    assert await run(history, "message-controls", since="2026-01-13") == []


async def test_reply_models_count_replies_drops_and_tokens_per_model_config(history: Any) -> None:
    from app.db.models import TurnStageMetric
    from tests.integration.analytics.conftest import at

    async with history() as session:  # a reply the "big" model had dropped in t2
        session.add(TurnStageMetric(turn_id="t2", conversation_id="g1", stage="actor", agent_id="B", ms=500.0,
                                    input_tokens=40, output_tokens=0, outcome="error", model_config_id="big",
                                    created_at=at("t2")))  # fmt: skip
        await session.commit()
    fields = ("model_config_id", "replies", "dropped", "drop_rate", "input_tokens", "output_tokens", "input_per_reply")
    rows = await run(history, "reply-models")
    assert pick(rows, *fields) == [
        ("big", 3, 1, 0.333333, 70, 10, 23.333333),
        ("default", 1, 0, 0.0, 40, 5, 40.0),
        ("unrecorded", 1, 0, 0.0, 30, 5, 30.0),  # saved before the column
    ]
    assert pick(await run(history, "reply-models", agent="B"), *fields) == [("big", 1, 1, 1.0, 40, 0, 40.0)]
