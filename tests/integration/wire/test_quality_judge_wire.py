"""The LLM quality judge against the schema-following simulator over loopback: the real ``openai``
client, our gateway and the one structured-output loop. A valid verdict comes back on the first
attempt in every structured-output mode; a judge that is down passes the reply (``fallback``);
a failed verdict's rows land in ``quality_events`` and the analytics ``quality`` query counts them
(both databases)."""

from __future__ import annotations

from typing import Any

import pytest

from analytics.filters import Filters
from analytics.queries import QUERIES
from app.db.engine import session_factory
from app.db.models import Agent, Conversation, Turn
from app.llm.config import load_llm_settings
from app.llm.gateway import ModelGateway
from app.llm.templates import PromptTemplates
from app.turns.judge import PROBLEM_CODES, REASON_MAX_CHARS, QualityVerdict, judge_reply, verdict_quality_rows
from app.turns.records import write_records

SIMULATOR_SEED = 23

LIA = Agent(id="lia", name="莉娅", aliases=[], personality_prompt="温柔、耐心的倾听者")
CASES = [
    ("zh-CN", "用户: 早上好\n周衡: 早", "我今天好难过", "别难过，我一直在这里陪着你。"),
    ("en", "user: morning\nHeng: hi", "I feel a bit lost today", "I'm here with you. What happened?"),
]


def gateway(sim: Any, mode: str = "json_schema") -> ModelGateway:
    env = {"COMPANION_LLM_BASE_URL": sim.base_url, "COMPANION_LLM_MODEL": "sim",
           "COMPANION_LLM_STRUCTURED_OUTPUT": mode, "COMPANION_LLM_TIMEOUT_MS": "5000"}  # fmt: skip
    return ModelGateway(load_llm_settings(env, {}), env=env)


async def _judge(model: Any, case: tuple[str, str, str, str]):
    language, transcript, user_text, reply_text = case
    return await judge_reply(model, PromptTemplates(), LIA, language=language, transcript=transcript,
                             user_text=user_text, reply_text=reply_text)  # fmt: skip


def _valid(verdict: QualityVerdict) -> None:
    assert isinstance(verdict, QualityVerdict)
    assert set(verdict.problems) <= set(PROBLEM_CODES) and len(set(verdict.problems)) == len(verdict.problems)
    assert verdict.passed == (not verdict.problems)
    assert len(verdict.reason) <= REASON_MAX_CHARS


@pytest.mark.parametrize("mode", ["json_schema", "json_object", "prompt"])
async def test_a_valid_verdict_comes_back_over_the_wire(sim, mode: str) -> None:
    model = gateway(sim, mode)
    try:
        for case in CASES * 3:
            run = await _judge(model, case)
            assert run.source == "llm" and run.attempts == 1 and run.error is None, run.error
            assert run.stage == "quality" and run.usage.input_tokens > 0
            _valid(run.value)
    finally:
        await model.aclose()


async def test_a_judge_that_is_down_passes_the_reply(sim) -> None:
    sim.configure(fault_rate=1.0, faults=("500",))
    model = gateway(sim)
    try:
        run = await _judge(model, CASES[0])
    finally:
        await model.aclose()
    assert run.source == "fallback" and run.value.passed and run.value.problems == []
    assert run.error and run.error["code"].startswith("model_")


async def test_failed_verdicts_from_the_wire_are_counted_by_the_analytics_quality_query(sim, engine) -> None:
    model = gateway(sim)
    try:
        failed = None
        for _ in range(20):  # the simulator answers any schema-valid verdict; take the first that fails
            run = await _judge(model, CASES[0])
            if run.source == "llm" and not run.value.passed:
                failed = run.value
                break
    finally:
        await model.aclose()
    assert failed is not None, "the simulator never answered a failing verdict"
    rows = (verdict_quality_rows("qt1", "qc1", "lia", "primary", failed, "regenerated")
            + verdict_quality_rows("qt1", "qc1", "lia", "primary", failed, "dropped"))  # fmt: skip
    sessions = session_factory(engine)
    async with sessions() as session:
        session.add(Conversation(id="qc1", owner_id="alice", kind="group"))
        await session.flush()
        session.add(Turn(id="qt1", conversation_id="qc1", owner_id="alice", status="completed"))
        await session.flush()
        await write_records(session, decisions=[], metrics=[], quality=rows)
        await session.commit()
    async with sessions() as session:
        counted = await QUERIES["quality"].run(session, Filters())
    by_reason = {(r.reason, r.reply_kind): (r.regenerated, r.dropped, r.total) for r in counted}
    assert by_reason == {(code, "primary"): (1, 1, 2) for code in failed.problems}
