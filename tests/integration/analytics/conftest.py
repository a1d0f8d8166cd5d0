"""A small hand-built history with known answers (see ``history.md``-style notes per test).

Five turns over three days, three agents, two group chats and one direct chat:

- t1 (g1, Jan 10): LLM picks A (rank 1); user sad (needs comfort)
- t2 (g1, Jan 10): fallback picks A (rank 1); user neutral, emotion from the fallback
- t3 (g1, Jan 11): LLM picks A (rank 2, B is rank 1); user angry (comfort + de-escalation)
- t4 (g2, Jan 11): B mentioned and selected; user happy
- t5 (d1, Jan 12): direct chat with A; user sad, emotion from the fallback

Selection mode / path / scorer margin / model agreed with the scorer (``PATHS``): t1 hybrid, llm,
0.5, yes; t2 llm, fallback (the model failed), 1.5; t3 llm, llm, 0.2, no; t4 hybrid, mention; t5
not recorded (a row from before those columns).

Agents: A tags comfort 0.9 (close bond), B tags analysis 0.8 + playful 0.7 (trusted), C no tags
(new connection).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from polyfactory.factories.sqlalchemy_factory import SQLAlchemyFactory

from app.db.engine import session_factory
from app.db.models import (
    Agent, Conversation, ConversationMember, Message, QualityEvent, SpeakerDecision, Suggestion, Turn, TurnStageMetric,
)

T0 = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)
STAGE = {"A": ("close_bond", 0.95), "B": ("trusted", 0.78), "C": ("new_connection", 0.25)}
EMO = {  # primary, needs (comfort, advice, deescalation), source
    "t1": ("sad", (True, False, False), "llm"), "t2": ("neutral", (False, False, False), "fallback"),
    "t3": ("angry", (True, False, True), "llm"), "t4": ("happy", (False, False, False), "llm"),
    "t5": ("sad", (True, False, False), "fallback"),
}
# turn -> conversation, day offset, decided_by, [(agent, rank, selected, llm_selected, mentioned)]
TURNS = {
    "t1": ("g1", 0, "llm", [("A", 1, True, True, 0), ("B", 2, False, False, 0), ("C", 3, False, False, 0)]),
    "t2": ("g1", 0, "fallback", [("A", 1, True, None, 0), ("B", 2, False, None, 0), ("C", 3, False, None, 0)]),
    "t3": ("g1", 1, "llm", [("B", 1, False, False, 0), ("A", 2, True, True, 0), ("C", 3, False, False, 0)]),
    "t4": ("g2", 1, "mention", [("B", 1, True, None, 1), ("A", 2, False, None, 0)]),
    "t5": ("d1", 2, "direct", [("A", 1, True, None, 0)]),
}

PATHS = {"t1": ("hybrid", "llm", 0.5, True), "t2": ("llm", "fallback", 1.5, None), "t3": ("llm", "llm", 0.2, False),
         "t4": ("hybrid", "mention", None, None), "t5": (None, None, None, None)}


class DecisionFactory(SQLAlchemyFactory[SpeakerDecision]):
    __set_relationships__ = False


class MetricFactory(SQLAlchemyFactory[TurnStageMetric]):
    __set_relationships__ = False


def at(turn: str, seconds: int = 0) -> datetime:
    return T0 + timedelta(days=TURNS[turn][1], minutes=int(turn[1:]), seconds=seconds)


def decision(turn: str, agent: str, rank: int, selected: bool, llm: bool | None, mentioned: int) -> SpeakerDecision:
    conv, _, decided, _ = TURNS[turn]
    primary, (comfort, advice, deesc), source = EMO[turn]
    mode, path, margin, agreed = PATHS[turn]
    return DecisionFactory.build(
        id=None, turn_id=turn, conversation_id=conv, conversation_kind="direct" if conv == "d1" else "group",
        agent_id=agent, created_at=at(turn), display_order=ord(agent) - 65, selected=selected,
        selected_by=decided if selected else None, decided_by=decided, rank=rank, score=3.0 - rank,
        weights_version="w1", relationship_score=STAGE[agent][1], relationship_stage=STAGE[agent][0],
        mentioned=float(mentioned), llm_selected=llm, primary_emotion=primary, intensity=0.5,
        needs_comfort=comfort, needs_advice=advice, needs_deescalation=deesc, emotion_source=source, synthetic=False,
        selection_mode=mode, selection_path=path, scorer_margin=margin, llm_agreed=agreed,
    )


def history_rows() -> list[Any]:
    rows: list[Any] = [
        Agent(id="A", name="Ann", capabilities={"comfort": 0.9, "analysis": 0.1, "deescalation": 0.1, "playful": 0.1}),
        Agent(id="B", name="Bo", capabilities={"comfort": 0.1, "analysis": 0.8, "deescalation": 0.2, "playful": 0.7}),
        Agent(id="C", name="Cy", capabilities=None),
        Conversation(id="g1", owner_id="u", kind="group"), Conversation(id="g2", owner_id="u", kind="group"),
        Conversation(id="d1", owner_id="u", kind="direct", direct_agent_id="A"),
    ]
    rows += [ConversationMember(conversation_id=c, agent_id=a) for c, agents in
             (("g1", "ABC"), ("g2", "AB"), ("d1", "A")) for a in agents]
    seq = {"g1": 0, "g2": 0, "d1": 0}
    replies = {"t1": [("A", "primary")], "t2": [("A", "primary")], "t3": [("A", "primary"), ("C", "cross")],
               "t4": [("B", "primary")], "t5": [("A", "primary")]}
    for turn, (conv, _, _, cands) in TURNS.items():
        rows.append(Turn(id=turn, conversation_id=conv, owner_id="u", status="completed", created_at=at(turn)))
        rows += [decision(turn, *c) for c in cands]
        for i, (agent, kind) in enumerate([(None, None), *replies[turn]]):
            seq[conv] += 1
            rows.append(Message(id=f"{turn}m{i}", conversation_id=conv, turn_id=turn, seq=seq[conv],
                                role="user" if agent is None else "agent", agent_id=agent, content="x",
                                content_hash="h", reply_kind=kind, created_at=at(turn, i)))
    rows += [
        QualityEvent(turn_id="t3", conversation_id="g1", agent_id="A", reason="too_long", action="regenerated", created_at=at("t3")),
        QualityEvent(turn_id="t3", conversation_id="g1", agent_id="C", reply_kind="cross", reason="off_persona",
                     action="dropped", created_at=at("t3")),
        QualityEvent(turn_id="t4", conversation_id="g2", agent_id="B", reason="too_long", action="dropped", created_at=at("t4")),
    ]
    for i, turn in enumerate(["t1", "t2", "t3", "t4"]):
        conv = TURNS[turn][0]
        rows.append(MetricFactory.build(id=None, turn_id=turn, conversation_id=conv, stage="actor", agent_id="A",
                                        ms=100.0 * (i + 1), input_tokens=10 * (i + 1), output_tokens=5, estimated=i == 0,
                                        outcome="ok", created_at=at(turn), synthetic=False,
                                        model_config_id=("big", "big", None, "default")[i]))  # fmt: skip
    for ms, outcome, turn in ((50.0, "fallback", "t2"), (70.0, "ok", "t1")):
        rows.append(MetricFactory.build(id=None, turn_id=turn, conversation_id="g1", stage="emotion", agent_id=None, ms=ms,
                                        input_tokens=0, output_tokens=0, estimated=False, outcome=outcome,
                                        created_at=at(turn), synthetic=False, model_config_id=None))
    for sid, turn, status, attempts, fallback in (("s1", "t1", "ready", 1, False), ("s2", "t2", "ready", 2, False),
                                                   ("s3", "t3", "failed", 3, False), ("s4", "t4", "ready", 3, True),
                                                   ("s5", "t5", "cleared", 1, False)):
        rows.append(Suggestion(id=sid, conversation_id=TURNS[turn][0], anchor_message_id=f"{turn}m1", turn_id=turn,
                               status=status, attempts=attempts, fallback=fallback, created_at=at(turn, 5)))
    return rows


@pytest.fixture
async def history(engine: Any) -> Any:
    """The known history written to the test database; yields a session factory."""
    sessions = session_factory(engine)
    async with sessions() as session:
        for group in (Agent, Conversation, ConversationMember, Turn, Message):
            session.add_all([r for r in history_rows() if isinstance(r, group)])
            await session.flush()
        session.add_all([r for r in history_rows() if not isinstance(r, (Agent, Conversation, ConversationMember, Turn, Message))])
        await session.commit()
    return sessions
