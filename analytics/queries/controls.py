"""Message controls (issue 27): how often users regenerate, swipe back, rewind or stop an
agent's replies. A user undoing a reply is the strongest bad-reply signal a tuning script gets.

One row per agent (``scope`` ``agent``) and one total row (``scope`` ``all``, no agent), from
``conversation_controls`` in the range:

- ``regenerations`` / ``swipes`` / ``swipes_back``: ``regenerate`` and ``select`` rows of the
  agent's messages; a swipe is back when it went to an older version (``details.back``).
- ``rewinds``: rewinds that removed at least one of the agent's replies, ``rewound_replies`` how
  many (``details.removedByAgent``; the maps are read grouped and summed in Python, since SQLite
  and PostgreSQL walk JSON objects differently and rewinds are few).
- ``stops``: ``cancel`` rows, charged to every agent that spoke in the stopped turn (selected, or
  saved a reply in it) — the control row names the turn, not who was writing. A stop before
  anyone was chosen counts in the total row only; the total counts each stop once.
- Rates are per ``replies``: the agent's messages saved in the range and still visible (not
  rewound away, ``hidden_at``, nor deleted). Replies a rewind removed are in ``rewound_replies``.

Filters: the range is each row's ``created_at``; ``agent`` keeps those agents' rows (the total is
over them); ``selectedBy`` keeps replies, regenerations and swipes of messages from turns decided
that way and stops of such turns. A rewind records only counts per agent, not the turns of the
replies it removed, so under ``selectedBy`` its columns are null (unknown), not zero.
"""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace
from sqlalchemy import and_, distinct, func, select, union
from sqlalchemy.ext.asyncio import AsyncSession

from analytics.filters import Filters
from analytics.queries.sql import Row, conditions, count_if, ratio, where
from app.db.models import Agent, ConversationControl as CC, Message, SpeakerDecision as SD

AGENT, ALL = "agent", "all"


class ControlRow(Row):
    scope: str  # agent | all
    agent_id: str | None
    agent_name: str | None
    replies: int
    regenerations: int
    swipes: int
    swipes_back: int
    rewinds: int | None
    rewound_replies: int | None
    stops: int
    regenerate_rate: float | None
    swipe_rate: float | None
    swipe_back_rate: float | None
    rewind_rate: float | None
    stop_rate: float | None


class _Counts:
    __slots__ = ("replies", "regenerations", "swipes", "swipes_back", "rewinds", "rewound_replies", "stops")

    def __init__(self) -> None:
        self.replies = self.regenerations = self.swipes = self.swipes_back = self.rewinds = 0
        self.rewound_replies = self.stops = 0


def _decided_turns(f: Filters):  # noqa: ANN202 - SQL subquery
    return select(SD.turn_id).where(SD.decided_by.in_(f.selected_by))


def _control_terms(f: Filters, kind: str | tuple[str, ...]) -> list:
    kinds = (kind,) if isinstance(kind, str) else kind
    return [CC.kind.in_(kinds), *conditions(replace(f, agent_ids=(), selected_by=()), created=CC.created_at,
                                            conversation=CC.conversation_id)]  # fmt: skip


async def _replies(session: AsyncSession, f: Filters) -> dict[str, int]:
    terms = [Message.role == "agent", Message.agent_id.is_not(None), Message.hidden_at.is_(None),
             Message.deleted_at.is_(None), *conditions(f, created=Message.created_at, conversation=Message.conversation_id,
                                                       turn=Message.turn_id, agent=Message.agent_id)]  # fmt: skip
    stmt = select(Message.agent_id, func.count().label("n")).where(where(terms)).group_by(Message.agent_id)
    return {r.agent_id: int(r.n) for r in await session.execute(stmt)}


async def _versions(session: AsyncSession, f: Filters) -> list[Any]:
    """Regenerations and swipes per agent (``None``: a control row without an agent)."""
    terms = _control_terms(f, ("regenerate", "select"))
    if f.agent_ids:
        terms.append(CC.agent_id.in_(f.agent_ids))
    if f.selected_by:
        terms.append(CC.message_id.in_(select(Message.id).where(Message.turn_id.in_(_decided_turns(f)))))
    is_select = CC.kind == "select"
    stmt = (
        select(CC.agent_id, count_if(CC.kind == "regenerate").label("regen"), count_if(is_select).label("swipes"),
               count_if(and_(is_select, CC.details["back"].as_boolean().is_(True))).label("back"))
        .where(where(terms))
        .group_by(CC.agent_id)
    )  # fmt: skip
    return list((await session.execute(stmt)).all())


async def _stops(session: AsyncSession, f: Filters) -> tuple[dict[str, int], int]:
    """Stops per agent that spoke in the stopped turn, and the number of stops (each once)."""
    terms = _control_terms(f, "cancel")
    if f.selected_by:
        terms.append(CC.turn_id.in_(_decided_turns(f)))
    stopped = select(CC.turn_id).where(where(terms))
    speakers = union(
        select(SD.turn_id.label("turn_id"), SD.agent_id.label("agent_id")).where(SD.selected, SD.turn_id.in_(stopped)),
        select(Message.turn_id, Message.agent_id).where(
            Message.role == "agent", Message.agent_id.is_not(None), Message.turn_id.in_(stopped)),
    ).subquery("speakers")  # fmt: skip
    agent = func.coalesce(CC.agent_id, speakers.c.agent_id)
    pairs = (
        select(CC.id.label("stop"), agent.label("agent"))
        .select_from(CC)
        .outerjoin(speakers, and_(CC.agent_id.is_(None), speakers.c.turn_id == CC.turn_id))
        .where(where(terms))
        .subquery("pairs")
    )
    keep = pairs.c.agent.in_(f.agent_ids) if f.agent_ids else None
    per = select(pairs.c.agent, func.count(distinct(pairs.c.stop)).label("n")).where(pairs.c.agent.is_not(None))
    if keep is not None:
        per = per.where(keep)
    total = select(func.count(distinct(pairs.c.stop)))
    if keep is not None:
        total = total.where(keep)
    by_agent = {r.agent: int(r.n) for r in await session.execute(per.group_by(pairs.c.agent))}
    return by_agent, int((await session.execute(total)).scalar_one() or 0)


async def _rewinds(session: AsyncSession, f: Filters, counts: dict[str, _Counts]) -> int:
    """Adds each agent's rewinds and removed replies to ``counts``; returns the rewinds that
    removed a reply of any (filtered) agent."""
    removed = CC.details["removedByAgent"].label("removed")
    stmt = select(removed, func.count().label("n")).where(where(_control_terms(f, "rewind"))).group_by(removed)
    total = 0
    for r in await session.execute(stmt):
        by_agent = {a: int(c) for a, c in (r.removed or {}).items()
                    if isinstance(c, int) and c > 0 and (not f.agent_ids or a in f.agent_ids)}  # fmt: skip
        for agent_id, removed_count in by_agent.items():
            row = counts.setdefault(agent_id, _Counts())
            row.rewinds += int(r.n)
            row.rewound_replies += int(r.n) * removed_count
        total += int(r.n) if by_agent else 0
    return total


async def message_controls(session: AsyncSession, f: Filters) -> list[ControlRow]:
    counts: dict[str, _Counts] = {}
    whole = _Counts()
    for agent_id, n in (await _replies(session, f)).items():
        counts.setdefault(agent_id, _Counts()).replies = n
        whole.replies += n
    for r in await _versions(session, f):
        regen, swipes, back = int(r.regen or 0), int(r.swipes or 0), int(r.back or 0)
        if r.agent_id is not None:
            row = counts.setdefault(r.agent_id, _Counts())
            row.regenerations, row.swipes, row.swipes_back = regen, swipes, back
        whole.regenerations += regen
        whole.swipes += swipes
        whole.swipes_back += back
    stops, whole.stops = await _stops(session, f)
    for agent_id, n in stops.items():
        counts.setdefault(agent_id, _Counts()).stops = n
    known_rewinds = not f.selected_by
    if known_rewinds:
        whole.rewinds = await _rewinds(session, f, counts)
        whole.rewound_replies = sum(c.rewound_replies for c in counts.values())
    if not counts and not (whole.regenerations or whole.swipes or whole.stops or whole.rewinds):
        return []
    names = {r.id: r.name for r in await session.execute(select(Agent.id, Agent.name).where(Agent.id.in_(counts)))}
    rows = [_row(AGENT, a, names.get(a), counts[a], known_rewinds) for a in sorted(counts)]
    return [*rows, _row(ALL, None, None, whole, known_rewinds)]


def _row(scope: str, agent_id: str | None, name: str | None, c: _Counts, known_rewinds: bool) -> ControlRow:
    return ControlRow(
        scope=scope, agent_id=agent_id, agent_name=name, replies=c.replies, regenerations=c.regenerations,
        swipes=c.swipes, swipes_back=c.swipes_back, rewinds=c.rewinds if known_rewinds else None,
        rewound_replies=c.rewound_replies if known_rewinds else None, stops=c.stops,
        regenerate_rate=ratio(c.regenerations, c.replies), swipe_rate=ratio(c.swipes, c.replies),
        swipe_back_rate=ratio(c.swipes_back, c.replies),
        rewind_rate=ratio(c.rewinds, c.replies) if known_rewinds else None, stop_rate=ratio(c.stops, c.replies),
    )  # fmt: skip


__all__ = ["ControlRow", "message_controls"]
