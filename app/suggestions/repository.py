"""The ``suggestions`` table: the database, not a process, decides which result is current.

A result is stored only by a conditional ``UPDATE ... WHERE status = 'generating'`` that also
checks no user message arrived after the row was created. So a generation cancelled by another
server process (which cleared the row) or overtaken by a user message posted through any
endpoint can never become ``ready``, whatever the process that ran it believes.

The same holds for the anchor: once the message the chips answer is edited, regenerated (both
set ``edited_at``) or deleted after the row was created, the chips are stale; and a conversation
whose ``autoReply.enabled`` is off has no current chips. Both are checked when a result is stored
and when ``latest`` is read, so no endpoint that edits messages or settings has to remember to
clear suggestions.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, exists, or_, select, true, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Conversation, Message, Suggestion, TurnStageMetric, new_id, utcnow

# A live generation takes at most 3 attempts × the largest timeoutMs (30 s); a row still
# ``generating`` after that (plus slack) was left by a crashed process. Other processes may be
# generating right now on the same database, so start-up only fails rows older than this.
ABANDONED_AFTER = timedelta(seconds=3 * 30 + 10)
OPEN = ("generating", "ready")


def _newer_user_message() -> Any:
    return exists().where(
        Message.conversation_id == Suggestion.conversation_id,
        Message.role == "user",
        Message.created_at > Suggestion.created_at,
    )


def _anchor_changed() -> Any:
    return exists().where(
        Message.id == Suggestion.anchor_message_id,
        or_(Message.deleted_at.is_not(None), Message.edited_at > Suggestion.created_at),
    )


def _stale() -> Any:
    return or_(_newer_user_message(), _anchor_changed())


async def auto_reply_enabled(session: AsyncSession, conversation_id: str) -> bool:
    settings = await session.scalar(select(Conversation.settings).where(Conversation.id == conversation_id))
    return bool(((settings or {}).get("autoReply") or {}).get("enabled", True))


async def still_current(session: AsyncSession, suggestion_id: str) -> bool:
    """Whether a generation should go on: its row is still ``generating``, not stale, and
    suggestions are still on for the conversation (see ``SuggestionService`` watching it)."""
    row = (await session.execute(
        select(Suggestion.conversation_id).where(Suggestion.id == suggestion_id, Suggestion.status == "generating",
                                                 ~_stale())
    )).first()  # fmt: skip
    return row is not None and await auto_reply_enabled(session, row.conversation_id)


async def create(session: AsyncSession, *, conversation_id: str, anchor_message_id: str, turn_id: str | None) -> Suggestion:
    now = utcnow()
    row = Suggestion(
        id=new_id(), conversation_id=conversation_id, anchor_message_id=anchor_message_id, turn_id=turn_id,
        status="generating", options=[], fallback=False, attempts=0, usage={}, problems=[],
        created_at=now, updated_at=now,
    )  # fmt: skip
    session.add(row)
    await session.commit()
    return row


async def finish(session: AsyncSession, suggestion_id: str, *, status: str, **values: Any) -> bool:
    """Store the outcome if the row is still current; otherwise mark it ``cleared``. Commits."""
    conversation_id = await session.scalar(select(Suggestion.conversation_id).where(Suggestion.id == suggestion_id))
    stored = False
    if conversation_id is not None and await auto_reply_enabled(session, conversation_id):
        result = await session.execute(
            update(Suggestion)
            .where(Suggestion.id == suggestion_id, Suggestion.status == "generating", ~_stale())
            .values(status=status, updated_at=utcnow(), **values)
            .execution_options(synchronize_session=False)
        )
        stored = result.rowcount == 1
    if not stored:
        await session.execute(
            update(Suggestion)
            .where(Suggestion.id == suggestion_id, Suggestion.status == "generating")
            .values(status="cleared", updated_at=utcnow(), **values)
            .execution_options(synchronize_session=False)
        )
    await session.commit()
    return stored


async def clear_open(session: AsyncSession, conversation_id: str) -> int:
    """A new user message: in-flight and ready suggestions of the conversation are no longer
    current. The caller commits (it is the user message's own transaction)."""
    s = Suggestion.__table__.c  # a Core statement: it runs in every user message's transaction
    result = await session.execute(
        update(Suggestion.__table__).where(s.conversation_id == conversation_id, s.status.in_(OPEN))
        .values(status="cleared", updated_at=utcnow())
    )  # fmt: skip
    return result.rowcount


async def expire_abandoned(session: AsyncSession, *, conversation_id: str | None = None, now: datetime | None = None) -> int:
    """``generating`` rows older than any live generation can be → ``failed``. Commits."""
    cutoff = (now or utcnow()) - ABANDONED_AFTER
    conditions = [Suggestion.status == "generating", Suggestion.updated_at < cutoff]
    if conversation_id is not None:
        conditions.append(Suggestion.conversation_id == conversation_id)
    result = await session.execute(
        update(Suggestion)
        .where(and_(*conditions))
        .values(status="failed", problems=[["interrupted: the generating process stopped (restart or crash)"]],
                updated_at=utcnow())  # fmt: skip
        .execution_options(synchronize_session=False)
    )
    await session.commit()
    return result.rowcount


async def latest(session: AsyncSession, conversation_id: str) -> Suggestion | None:
    """The newest record, after settling rows a crash, a user message, an edited, regenerated or
    deleted anchor, or turning suggestions off made non-current."""
    await expire_abandoned(session, conversation_id=conversation_id)
    stale = _stale() if await auto_reply_enabled(session, conversation_id) else true()
    await session.execute(
        update(Suggestion)
        .where(Suggestion.conversation_id == conversation_id, Suggestion.status.in_(OPEN), stale)
        .values(status="cleared", updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    await session.commit()
    return await session.scalar(
        select(Suggestion)
        .where(Suggestion.conversation_id == conversation_id)
        .order_by(Suggestion.created_at.desc(), Suggestion.id.desc())
        .limit(1)
    )


async def get(session: AsyncSession, suggestion_id: str) -> Suggestion | None:
    return await session.scalar(
        select(Suggestion).where(Suggestion.id == suggestion_id).execution_options(populate_existing=True)
    )


async def add_metric(session: AsyncSession, *, turn_id: str, conversation_id: str, ms: float,
                     usage: dict[str, Any], outcome: str) -> None:  # fmt: skip
    session.add(TurnStageMetric(
        turn_id=turn_id, conversation_id=conversation_id, stage="auto_reply", ms=ms, outcome=outcome,
        input_tokens=int(usage.get("inputTokens", 0)), output_tokens=int(usage.get("outputTokens", 0)),
        estimated=bool(usage.get("estimated", False)),
    ))  # fmt: skip
    await session.commit()
