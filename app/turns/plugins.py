"""The typed seam where other features (Story, suggestions) join a turn.

A feature subclasses ``TurnPlugin`` and overrides what it needs; the pipeline calls every
plugin at these points, in order:

* ``conversation_saved(owner_id, conversation_id)`` — a conversation was created or its settings
  or members changed (Story: initialise its agents ahead, in the background);
* ``user_message_stored(session, conversation_id)`` — inside the transaction that stores a new
  user message (suggestions: the old chips are cleared in the same write);
* ``turn_starting(conversation_id)`` — that message is stored (suggestions: this process's
  generations for the conversation are cancelled);
* ``before_actor(info, agent_id) -> ActorPrep`` — before a selected agent's primary reply (Story:
  its stage material); may run speculatively and be cancelled. ``ActorPrep.beside`` is work that
  runs while the actor writes (Story: the settle pass); the pipeline awaits it before the reply
  is saved, and it is cancelled with the agent's job;
* ``reply_ready(info, agent_id, prep, message_id, text) -> ReplyExtras`` — the reply passed its
  checks and is about to be saved under ``message_id``; the returned metadata is saved with the
  message in the same write (Story: finalize its state and announce the outcome);
* ``reply_saved(info, agent_id, prep, message) -> dict | None`` — the message exists (Story: the
  compare-and-swap); a returned dict patches the metadata only when the outcome differs from the
  announced one;
* ``reply_dropped(info, agent_id, prep)`` — the agent's reply was dropped or cancelled;
* ``turn_finished(info, messages, emit)`` — after the turn's result is saved and its lock
  released, in the background (suggestions; Story's adoption of the saved reply); a returned
  dict joins the turn's stored result (``suggestions``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from sqlalchemy.ext.asyncio import AsyncSession

from app.conversations.settings import ConversationSettings
from app.llm.port import Usage
from scheduling import AgentProfile, GroupMessage, UserEmotion, UserIntent
from scheduling.presence import Presence

Emit = Callable[[str, dict[str, Any]], Awaitable[Any]]


class TurnInfo(msgspec.Struct, kw_only=True):
    turn_id: str
    owner_id: str
    conversation_id: str
    conversation_kind: str
    settings: dict[str, Any]  # the stored (normalised) settings, as saved
    config: ConversationSettings  # the same, decoded once
    language: str
    user_message_id: str
    user_message_seq: int
    user_text: str
    agents: list[AgentProfile]
    agent_rows: dict[str, Any]
    recent: list[GroupMessage]  # the conversation's window; a member's own is ``recent_for``
    emotion: UserEmotion | None = None
    intent: UserIntent | None = None
    # Continue: no new user message. ``user_message_id``/``user_text`` are then the last visible
    # user message the reply continues from, ``user_message_seq`` the next message position.
    continuation: bool = False
    continue_agent_id: str | None = None
    presence: Presence = msgspec.field(default_factory=lambda: Presence(mode="all"))

    def recent_for(self, agent_id: str) -> list[GroupMessage]:
        """The window as ``agent_id`` witnessed it (``settings.history``; scheduling/presence.py)."""
        return self.presence.window(self.recent, agent_id)


class ActorPrep(msgspec.Struct, kw_only=True):
    stage_material: str | None = None
    # What the reply must not recite (``ReplyChecks.stage``): the material's rules and the texts it
    # shows this turn (a Story stage's event, clues, directions).
    stage_texts: tuple[str, ...] = ()
    token: Any = None
    # A reason this agent must not reply this turn (Story: the previous reply's world settlement
    # failed, and the seed's recovery table fails the request rather than fake "no change").
    refuse: str | None = None
    # Work running beside the actor that must end before ``reply_ready`` (it never raises).
    beside: asyncio.Future[Any] | None = None


async def await_beside(preps: list[tuple[Any, ActorPrep]]) -> None:
    for _, prep in preps:
        if prep.beside is not None:
            await asyncio.wait({prep.beside})


class StageMetric(msgspec.Struct, kw_only=True):
    """One ``turn_stage_metrics`` row of this turn."""

    stage: str
    ms: float
    agent_id: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False
    outcome: str = "ok"  # ok | fallback | error | skipped
    model_config_id: str | None = None  # a reply's model config (the member's, or the actor stage's)

    @classmethod
    def of(cls, stage: str, ms: float, usage: Usage, agent_id: str | None, outcome: str, *,
           model_config_id: str | None = None) -> StageMetric:  # fmt: skip
        return cls(stage=stage, ms=round(ms, 3), agent_id=agent_id, input_tokens=usage.input_tokens,
                   output_tokens=usage.output_tokens, estimated=usage.estimated,
                   outcome="skipped" if outcome == "offline" else outcome if outcome in ("ok", "fallback", "error", "skipped") else "ok",
                   model_config_id=model_config_id)  # fmt: skip

    def row(self, turn_id: str, conversation_id: str) -> dict[str, Any]:
        return {"turn_id": turn_id, "conversation_id": conversation_id, **msgspec.structs.asdict(self)}


class ReplyExtras(msgspec.Struct, kw_only=True):
    metadata: dict[str, Any] = {}  # merged into the message's metadata (e.g. ``story``)
    metrics: list[StageMetric] = []


class TurnPlugin:
    async def conversation_saved(self, owner_id: str, conversation_id: str) -> None:
        return None

    async def user_message_stored(self, session: AsyncSession, conversation_id: str) -> None:
        return None

    async def turn_starting(self, conversation_id: str) -> None:
        return None

    async def history_rewound(self, session: AsyncSession, conversation_id: str, *, to_message_id: str, to_seq: int,
                              by: str) -> dict[str, Any]:  # fmt: skip
        """Inside the rewind's transaction, under the turn lock: everything after ``to_seq`` was
        just hidden. Returns this feature's part of the rewind's report."""
        return {}

    async def before_actor(self, info: TurnInfo, agent_id: str) -> ActorPrep:
        return ActorPrep()

    async def reply_ready(self, info: TurnInfo, agent_id: str, prep: ActorPrep, message_id: str, text: str) -> ReplyExtras:
        return ReplyExtras()

    async def reply_saved(self, info: TurnInfo, agent_id: str, prep: ActorPrep, message: Any) -> dict[str, Any] | None:
        return None

    async def reply_dropped(self, info: TurnInfo, agent_id: str, prep: ActorPrep) -> None:
        return None

    async def turn_finished(self, info: TurnInfo, messages: list[Any], emit: Emit) -> dict[str, Any] | None:
        return None
