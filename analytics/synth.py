"""``companion analytics synth``: write synthetic history into the configured database.

Everything it writes is marked: its own agents (names end in "(synthetic n)"), conversations
owned by ``synthetic``, ``synthetic = true`` on decision, metric, quality and suggestion rows, and
``{"synthetic": true}`` in message metadata. Rows are written in chunks of turns, each chunk one
transaction, by the fastest path of the driver (PostgreSQL ``COPY``; SQLite ``executemany`` on
the raw connection) — 250,000 turns / 1,000,000 decision rows take minutes, not hours.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import msgspec
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from analytics.synth_history import COLUMNS, generate_turn, make_agents, make_conversation
from app.db.models import Agent, Conversation, ConversationMember

OWNER = "synthetic"
TABLE_ORDER = ("turns", "messages", "speaker_decisions", "turn_stage_metrics", "quality_events", "suggestions")


class SynthSummary(msgspec.Struct, rename="camel"):
    turns: int
    agents: int
    conversations: int
    rows: dict[str, int]
    since: str
    until: str


def _sqlite_value(value: object) -> object:
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return value


def _pg_value(value: object) -> object:
    return json.dumps(value) if isinstance(value, (dict, list)) else value


async def _bulk_insert(conn: AsyncConnection, table: str, rows: list[tuple]) -> None:
    if not rows:
        return
    cols = COLUMNS[table]
    raw = (await conn.get_raw_connection()).driver_connection
    if conn.dialect.name == "postgresql":
        await raw.copy_records_to_table(table, records=[tuple(map(_pg_value, r)) for r in rows], columns=list(cols))
    else:
        sql = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
        await raw.executemany(sql, [tuple(map(_sqlite_value, r)) for r in rows])


async def synthesize(
    engine: AsyncEngine,
    *,
    turns: int,
    agents: int = 4,
    seed: int = 1,
    days: int = 365,
    turns_per_conversation: int = 500,
    now: datetime | None = None,
    chunk: int = 5000,
    progress: Callable[[int], None] | None = None,
) -> SynthSummary:
    """Spread ``turns`` over the last ``days`` days. About 85 % of turns are in group chats with
    every synthetic agent as a member, 15 % in one-on-one chats; one day in 37 the LLM is down."""
    if turns < 1 or agents < 2:
        raise ValueError("synth needs at least 1 turn and 2 agents")
    rng = random.Random(seed)
    now = (now or datetime.now(UTC)).astimezone(UTC)
    start = now - timedelta(days=days)
    run = f"{rng.getrandbits(24):06x}"
    crew = make_agents(rng, agents, run)
    groups = [make_conversation(rng, f"syn{run}g{i:05d}", "group", crew)
              for i in range(max(min(3, turns), turns // turns_per_conversation))]
    directs = [make_conversation(rng, f"syn{run}d{i:05d}", "direct", [a]) for i, a in enumerate(crew)]
    async with engine.begin() as conn:
        await conn.execute(insert(Agent), [
            {"id": a.id, "name": a.name, "headline": "synthetic agent for demos and benchmarks",
             "capabilities": a.capabilities, "created_at": start, "updated_at": start} for a in crew])
        await conn.execute(insert(Conversation), [
            {"id": c.id, "owner_id": OWNER, "kind": c.kind, "title": f"synthetic {c.kind} {c.id[-5:]}",
             "direct_agent_id": c.agents[0].id if c.kind == "direct" else None, "settings": {"synthetic": True},
             "created_at": start, "updated_at": start} for c in groups + directs])
        await conn.execute(insert(ConversationMember), [
            {"conversation_id": c.id, "agent_id": a.id, "display_order": a.display_order}
            for c in groups + directs for a in c.agents])
    step = timedelta(days=days) / turns
    counts = dict.fromkeys(TABLE_ORDER, 0)
    done = 0
    while done < turns:
        out: dict[str, list] = {t: [] for t in TABLE_ORDER}
        for i in range(done, min(turns, done + chunk)):
            at = start + step * i + timedelta(microseconds=rng.randrange(1000))
            conv = rng.choice(directs) if rng.random() < 0.15 else rng.choice(groups)
            generate_turn(rng, conv, at, (at - start).days % 37 == 5, out)
        async with engine.begin() as conn:
            for table in TABLE_ORDER:
                await _bulk_insert(conn, table, out[table])
                counts[table] += len(out[table])
        if progress:
            progress(min(chunk, turns - done))
        done = min(turns, done + chunk)
    async with engine.begin() as conn:
        for c in groups + directs:
            await conn.execute(Conversation.__table__.update().where(Conversation.id == c.id).values(
                message_count=c.seq, last_seq=c.seq, updated_at=c.last_at or start,
                last_message_at_ms=int(c.last_at.timestamp() * 1000) if c.last_at else None))
    return SynthSummary(turns=turns, agents=agents, conversations=len(groups) + len(directs), rows=counts,
                        since=start.isoformat(), until=now.isoformat())
