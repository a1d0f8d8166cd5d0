"""Write for me over HTTP's side: what the line is written from, and the events it streams.

Read from the database, never from the request (as for suggestions): the saved recent window
(messages rewound away or deleted are not in it), the conversation's language, the members'
names and the newest turn's reading of the user. The request brings only ``draft``, the words the
user has typed, which the line keeps at its start. Nothing is stored: the line is the user's to
send or not, so it is never a message, never a suggestion row, and never on ``/events``.

Events, in order, for SSE (``impersonate.`` + ``started`` {attempt}, ``delta`` {attempt, text},
``discarded`` {attempt, problems} when an attempt is rejected and the next one starts, then
``done`` {text, draft, attempts, model, usage} or ``failed`` {code, message, attempts}).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Agent, Conversation, ConversationMember, Message, Turn
from app.errors import UpstreamError, ValidationFailed
from app.suggestions.context import USER_SPEAKER, config_of, hint
from story.auto_reply import AutoReplyConfig, ContextMessage, Guidance
from story.auto_reply.impersonate import ImpersonateFailed, ImpersonateInput, ImpersonateResult, impersonate

Emit = Callable[[str, dict[str, Any]], Awaitable[None]]


class ImpersonationFailed(UpstreamError):
    code = "impersonate_failed"

    def __init__(self, failed: ImpersonateFailed) -> None:
        super().__init__(str(failed), details={"attempts": failed.attempts, "model": failed.model})


async def prepare(session: AsyncSession, conv: Conversation, draft: str) -> tuple[AutoReplyConfig, ImpersonateInput]:
    config = config_of(conv.settings)
    if len(draft) > config.max_suggestion_chars:
        raise ValidationFailed(
            f"draft is {len(draft)} characters; at most autoReply.maxSuggestionChars ({config.max_suggestion_chars})",
            code="draft_too_long", details={"length": len(draft), "max": config.max_suggestion_chars},
        )  # fmt: skip
    members = list(await session.scalars(
        select(Agent).join(ConversationMember, ConversationMember.agent_id == Agent.id)
        .where(ConversationMember.conversation_id == conv.id).order_by(ConversationMember.display_order)
    ))  # fmt: skip
    names = {a.id: a.name for a in members}
    rows = list(await session.scalars(
        select(Message).where(Message.conversation_id == conv.id, Message.deleted_at.is_(None),
                              Message.hidden_at.is_(None), Message.content != "")
        .order_by(Message.seq.desc()).limit(config.context_message_count)
    ))[::-1]  # fmt: skip
    context = [
        ContextMessage(speaker=USER_SPEAKER if m.role == "user" else names.get(m.agent_id or "", "Character"),
                       role="user" if m.role == "user" else "agent", content=m.content, id=m.id)
        for m in rows if m.content.strip()
    ]  # fmt: skip
    direct = next((a for a in members if a.id == conv.direct_agent_id), None)
    about = ""
    if direct is not None:
        persona = (direct.description or direct.headline).strip()
        about = f"{direct.name}: {persona}" if persona else direct.name
    inp = ImpersonateInput(
        language=str((conv.settings or {}).get("language") or "zh-CN"), members=[a.name for a in members],
        context=context, draft=draft.strip(), guidance=await _guidance(session, rows), about=about,
    )  # fmt: skip
    return config, inp


async def _guidance(session: AsyncSession, rows: list[Message]) -> Guidance | None:
    """The newest user message's turn: how the user felt and what they wanted (hints only)."""
    latest = next((m for m in reversed(rows) if m.role == "user" and m.turn_id), None)
    turn = await session.get(Turn, latest.turn_id) if latest is not None else None
    if turn is None:
        return None
    emotion, intent = hint(turn.emotion), hint(turn.intent)
    return Guidance(emotion=emotion, intent=intent) if (emotion or intent) else None


async def write_for_me(model: Any, config: AutoReplyConfig, inp: ImpersonateInput, emit: Emit | None = None) -> dict[str, Any]:
    """The line as the response body; with ``emit``, every step as an event too. A line no
    attempt could make usable is ``ImpersonationFailed`` (502), never a made-up one."""
    send = emit or _quiet

    async def started(n: int) -> None:
        await send("impersonate.started", {"attempt": n})

    async def delta(n: int, text: str) -> None:
        await send("impersonate.delta", {"attempt": n, "text": text})

    async def discarded(n: int, problems: list[str]) -> None:
        await send("impersonate.discarded", {"attempt": n, "problems": problems})

    try:
        result: ImpersonateResult = await impersonate(model, inp, config, on_attempt=started, on_delta=delta,
                                                      on_discard=discarded)  # fmt: skip
    except ImpersonateFailed as exc:
        raise ImpersonationFailed(exc) from None
    body = {"text": result.text, "draft": inp.draft, **msgspec.to_builtins(result)}
    await send("impersonate.done", body)
    return body


async def _quiet(event: str, data: dict[str, Any]) -> None:
    return None
