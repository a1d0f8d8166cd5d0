"""SQLAlchemy 2 models. Alembic migrations under ``migrations/`` are the only way the schema
changes; ``tests/integration/test_migrations.py`` asserts the two never drift."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

JsonType = JSON().with_variant(JSONB(), "postgresql")

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def new_id() -> str:
    return uuid.uuid4().hex


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Agent(Base):
    __tablename__ = "agents"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(64))
    headline: Mapped[str] = mapped_column(Text, default="")
    description: Mapped[str] = mapped_column(Text, default="")
    story_background: Mapped[str] = mapped_column(Text, default="")
    personality_prompt: Mapped[str] = mapped_column(Text, default="")
    tone_prompt: Mapped[str] = mapped_column(Text, default="")
    guardrails_prompt: Mapped[str] = mapped_column(Text, default="")
    default_prompt: Mapped[str] = mapped_column(Text, default="")
    image_key: Mapped[str | None] = mapped_column(String(256), nullable=True)
    aliases: Mapped[list[str]] = mapped_column(JsonType, default=list)
    capabilities: Mapped[dict[str, float] | None] = mapped_column(JsonType, nullable=True)
    model_config_id: Mapped[str | None] = mapped_column(String(64), nullable=True)  # its replies' model; None: the actor stage's
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    deleted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Conversation(Base):
    __tablename__ = "conversations"
    __table_args__ = (
        CheckConstraint("kind IN ('direct', 'group')", name="kind"),
        Index("ix_conversations_owner_updated", "owner_id", "updated_at"),
        # At most one direct conversation per (owner, agent): enforced by the database.
        UniqueConstraint("owner_id", "direct_agent_id", name="uq_conversations_owner_direct_agent"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    owner_id: Mapped[str] = mapped_column(String(128))
    kind: Mapped[str] = mapped_column(String(16))
    title: Mapped[str] = mapped_column(String(200), default="")
    direct_agent_id: Mapped[str | None] = mapped_column(
        String(32), ForeignKey("agents.id", ondelete="RESTRICT"), nullable=True
    )
    settings: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    message_count: Mapped[int] = mapped_column(Integer, default=0)
    last_seq: Mapped[int] = mapped_column(BigInteger, default=0)
    last_message_at_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    version: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ConversationMember(Base):
    __tablename__ = "conversation_members"
    __table_args__ = (UniqueConstraint("conversation_id", "agent_id", name="uq_conversation_members_agent"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    conversation_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("conversations.id", ondelete="CASCADE"), index=True
    )
    agent_id: Mapped[str] = mapped_column(String(32), ForeignKey("agents.id", ondelete="RESTRICT"), index=True)
    display_order: Mapped[int] = mapped_column(Integer, default=0)
    joined_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # muted: never selected by the model, the scorer or a reply order; only when named or asked to speak
    muted: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # the conversation's last_seq when it joined (0: there from the start); see scheduling/presence.py
    joined_seq: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")


class Turn(Base):
    __tablename__ = "turns"
    __table_args__ = (
        CheckConstraint("status IN ('running', 'completed', 'failed', 'cancelled')", name="status"),
        UniqueConstraint("conversation_id", "idempotency_key", name="uq_turns_conversation_idempotency"),
        Index("ix_turns_conversation_created", "conversation_id", "created_at"),
        Index("ix_turns_created", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    conversation_id: Mapped[str] = mapped_column(String(32), ForeignKey("conversations.id", ondelete="CASCADE"))
    owner_id: Mapped[str] = mapped_column(String(128))
    user_message_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    status: Mapped[str] = mapped_column(String(16), default="running")
    idempotency_key: Mapped[str | None] = mapped_column(String(128), nullable=True)
    # Non-null only while running: a unique index makes "one running turn per conversation"
    # a database fact that holds across server processes.
    running_lock: Mapped[str | None] = mapped_column(String(32), nullable=True, unique=True)
    intent: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    emotion: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    timings: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    usage: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    result: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    error: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # --- running-turn lease (issue 11, migration 0008) ---
    # While running, the owning process renews this every few seconds; a lease past it is stale
    # (its process died) and the next turn may take the conversation over.
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # --- end running-turn lease ---
    # Stop (issue 27, migration 0012): set by POST …/turns/{id}/cancel on any replica; the process
    # holding the lease reads it on each heartbeat and cancels its turn.
    cancel_requested_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # What started it (issue 28, migration 0017): user | continue | regenerate | auto; None: before 0017.
    trigger: Mapped[str | None] = mapped_column(String(16), nullable=True)


class Message(Base):
    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("conversation_id", "seq", name="uq_messages_conversation_seq"),
        CheckConstraint("role IN ('user', 'agent')", name="role"),
        Index("ix_messages_turn", "turn_id"),
        Index("ix_messages_agent_created", "agent_id", "created_at"),
        Index("ix_messages_created", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    conversation_id: Mapped[str] = mapped_column(String(32), ForeignKey("conversations.id", ondelete="CASCADE"))
    turn_id: Mapped[str | None] = mapped_column(String(32), ForeignKey("turns.id", ondelete="SET NULL"), nullable=True)
    seq: Mapped[int] = mapped_column(BigInteger)
    role: Mapped[str] = mapped_column(String(16))
    agent_id: Mapped[str | None] = mapped_column(String(32), ForeignKey("agents.id", ondelete="SET NULL"), nullable=True)
    content: Mapped[str] = mapped_column(Text)
    content_hash: Mapped[str] = mapped_column(String(64))
    reply_kind: Mapped[str | None] = mapped_column(String(16), nullable=True)
    respond_to_agent_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    metadata_json: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    # the members present when it was saved (muted ones too); None: saved before presence
    present_agent_ids: Mapped[list[str] | None] = mapped_column(JsonType, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    edited_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    deleted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # Versions and rewind (issue 27, migration 0012): ``selected_version`` is the number of the
    # ``message_versions`` row whose text ``content`` holds (null: never regenerated, one version);
    # ``hidden_at``/``hidden_by`` mark a message rewound away (a hidden branch: kept, not listed).
    selected_version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    hidden_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    hidden_by: Mapped[str | None] = mapped_column(String(32), nullable=True)


class MessageVersion(Base):
    """One version of an agent message: its text, model and why it exists (``original``,
    ``regenerate``). The message row carries the selected one's text, so every reader sees it."""

    __tablename__ = "message_versions"
    __table_args__ = (
        UniqueConstraint("message_id", "number", name="uq_message_versions_message_number"),
        Index("ix_message_versions_conversation_created", "conversation_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    message_id: Mapped[str] = mapped_column(String(32), ForeignKey("messages.id", ondelete="CASCADE"))
    conversation_id: Mapped[str] = mapped_column(String(32), ForeignKey("conversations.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    content: Mapped[str] = mapped_column(Text)
    content_hash: Mapped[str] = mapped_column(String(64))
    model: Mapped[str | None] = mapped_column(String(128), nullable=True)
    reason: Mapped[str] = mapped_column(String(32))
    metadata_json: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ConversationControl(Base):
    """A user's steering of a conversation after the fact (issue 27): ``regenerate``, ``select``
    (a swipe to another version), ``rewind``, ``cancel``; one row each, for analytics."""

    __tablename__ = "conversation_controls"
    __table_args__ = (Index("ix_conversation_controls_created", "created_at"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    conversation_id: Mapped[str] = mapped_column(String(32), ForeignKey("conversations.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))
    agent_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    message_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    turn_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    details: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class SpeakerDecision(Base):
    """One row per candidate agent per turn: what analytics queries and tuning learns from.

    ``selected_by`` is how this agent was chosen (null when not selected); ``decided_by`` is how
    the turn's selection was decided overall. ``llm_selected`` is null when the LLM did not decide.
    ``selection_mode`` / ``selection_path`` / ``scorer_margin`` / ``llm_agreed`` (per turn, on every
    row; null on rows older than them): the conversation's ``selection.mode``, the path that decided
    (mention | scorer | llm | fallback | direct | continue), the scorer's margin between its last
    pick and the best candidate it left out (null: no choice to make), and whether the model's
    valid choice agreed with the scorer's pick (null: the model was not asked or gave none).
    """

    __tablename__ = "speaker_decisions"
    __table_args__ = (
        UniqueConstraint("turn_id", "agent_id", name="uq_speaker_decisions_turn_agent"),
        Index("ix_speaker_decisions_created", "created_at"),
        Index("ix_speaker_decisions_conversation_created", "conversation_id", "created_at"),
        Index("ix_speaker_decisions_agent_created", "agent_id", "created_at"),
        Index("ix_speaker_decisions_rank_created", "rank", "created_at"),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    turn_id: Mapped[str] = mapped_column(String(32), ForeignKey("turns.id", ondelete="CASCADE"))
    conversation_id: Mapped[str] = mapped_column(String(32), ForeignKey("conversations.id", ondelete="CASCADE"))
    conversation_kind: Mapped[str] = mapped_column(String(16))
    agent_id: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    display_order: Mapped[int] = mapped_column(Integer, default=0)
    selected: Mapped[bool] = mapped_column(Boolean, default=False)
    selected_by: Mapped[str | None] = mapped_column(String(16), nullable=True)
    decided_by: Mapped[str] = mapped_column(String(16))
    rank: Mapped[int] = mapped_column(Integer)
    score: Mapped[float] = mapped_column(Float)
    weights_version: Mapped[str] = mapped_column(String(64))
    relationship_score: Mapped[float] = mapped_column(Float)
    relationship_stage: Mapped[str] = mapped_column(String(32))
    freshness_score: Mapped[float] = mapped_column(Float)
    recent_reply_count: Mapped[float] = mapped_column(Float)
    spoke_last_turn: Mapped[float] = mapped_column(Float)
    comfort_match: Mapped[float] = mapped_column(Float)
    advice_match: Mapped[float] = mapped_column(Float)
    deescalation_match: Mapped[float] = mapped_column(Float)
    playful_match: Mapped[float] = mapped_column(Float)
    mentioned: Mapped[float] = mapped_column(Float)
    llm_selected: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    primary_emotion: Mapped[str] = mapped_column(String(16))
    intensity: Mapped[float] = mapped_column(Float)
    needs_comfort: Mapped[bool] = mapped_column(Boolean, default=False)
    needs_advice: Mapped[bool] = mapped_column(Boolean, default=False)
    needs_deescalation: Mapped[bool] = mapped_column(Boolean, default=False)
    emotion_source: Mapped[str] = mapped_column(String(16))
    selection_mode: Mapped[str | None] = mapped_column(String(16), nullable=True)
    selection_path: Mapped[str | None] = mapped_column(String(16), nullable=True)
    scorer_margin: Mapped[float | None] = mapped_column(Float, nullable=True)
    llm_agreed: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    synthetic: Mapped[bool] = mapped_column(Boolean, default=False)


class Suggestion(Base):
    """Suggested next user replies for an agent message. Never a chat message."""

    __tablename__ = "suggestions"
    __table_args__ = (
        CheckConstraint("status IN ('generating', 'ready', 'failed', 'cleared')", name="status"),
        Index("ix_suggestions_conversation_created", "conversation_id", "created_at"),
        Index("ix_suggestions_status", "status"),
        Index("ix_suggestions_created", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    conversation_id: Mapped[str] = mapped_column(String(32), ForeignKey("conversations.id", ondelete="CASCADE"))
    anchor_message_id: Mapped[str] = mapped_column(String(32), ForeignKey("messages.id", ondelete="CASCADE"))
    turn_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    status: Mapped[str] = mapped_column(String(16), default="generating")
    options: Mapped[list[str]] = mapped_column(JsonType, default=list)
    fallback: Mapped[bool] = mapped_column(Boolean, default=False)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    usage: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    model: Mapped[str | None] = mapped_column(String(128), nullable=True)
    problems: Mapped[list[Any]] = mapped_column(JsonType, default=list)
    synthetic: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class TurnStageMetric(Base):
    """Latency and token usage of one pipeline stage of one turn (for p50/p95 queries in SQL).

    Stages: intent, emotion, select, actor, cross_reply, quality, story, auto_reply, total."""

    __tablename__ = "turn_stage_metrics"
    __table_args__ = (
        Index("ix_turn_stage_metrics_stage_created", "stage", "created_at"),
        Index("ix_turn_stage_metrics_created", "created_at"),
        Index("ix_turn_stage_metrics_stage_ms_created", "stage", "ms", "created_at"),
        Index("ix_turn_stage_metrics_stage_turn_created", "stage", "turn_id", "created_at"),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    turn_id: Mapped[str] = mapped_column(String(32), ForeignKey("turns.id", ondelete="CASCADE"), index=True)
    conversation_id: Mapped[str] = mapped_column(String(32), ForeignKey("conversations.id", ondelete="CASCADE"))
    stage: Mapped[str] = mapped_column(String(32))
    agent_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    ms: Mapped[float] = mapped_column(Float)
    input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    estimated: Mapped[bool] = mapped_column(Boolean, default=False)
    outcome: Mapped[str] = mapped_column(String(32), default="ok")  # ok | fallback | error | skipped
    model_config_id: Mapped[str | None] = mapped_column(String(64), nullable=True)  # a reply's model config
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    synthetic: Mapped[bool] = mapped_column(Boolean, default=False)


class QualityEvent(Base):
    """A reply that failed the quality check: regenerated once, then dropped with its reason."""

    __tablename__ = "quality_events"
    __table_args__ = (Index("ix_quality_events_created", "created_at"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    turn_id: Mapped[str] = mapped_column(String(32), ForeignKey("turns.id", ondelete="CASCADE"), index=True)
    conversation_id: Mapped[str] = mapped_column(String(32), ForeignKey("conversations.id", ondelete="CASCADE"))
    agent_id: Mapped[str] = mapped_column(String(32))
    reply_kind: Mapped[str] = mapped_column(String(16), default="primary")
    reason: Mapped[str] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(16))  # regenerated | dropped
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    synthetic: Mapped[bool] = mapped_column(Boolean, default=False)


class StoryState(Base):
    """Story state per (user, conversation, agent). Writes are compare-and-swap on ``revision``
    (``UPDATE ... WHERE revision = :expected``) so concurrent turns and processes never lose one."""

    __tablename__ = "story_states"
    __table_args__ = (
        UniqueConstraint("owner_id", "conversation_id", "agent_id", name="uq_story_states_scope"),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    owner_id: Mapped[str] = mapped_column(String(128))
    conversation_id: Mapped[str] = mapped_column(String(32), ForeignKey("conversations.id", ondelete="CASCADE"))
    agent_id: Mapped[str] = mapped_column(String(32), ForeignKey("agents.id", ondelete="CASCADE"))
    revision: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(32), default="active")
    envelope: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    quarantine: Mapped[list[Any]] = mapped_column(JsonType, default=list)
    last_outcome: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # The background adoption of the pending reply (app/story/adoption.py): the adopted state and
    # ``adoption`` = {messageId, contentHash, toolCalls, diagnostics, usage, at} — for that
    # message as it read then. Written only while ``revision`` is unchanged; ``envelope`` stays
    # the pre-adoption state, so an edited reply is adopted again from it.
    adopted_envelope: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    adoption: Mapped[dict[str, Any] | None] = mapped_column(JsonType, nullable=True)


# -- issue 14 (Story that lasts a long roleplay): quarantined Story events, outside the state ------
# Retention (app/story/repository.py): per story state at most QUARANTINE_KEEP records and none
# older than QUARANTINE_MAX_AGE; resolved (released/discarded) ones go first. Migration 0007.


class StoryQuarantine(Base):
    """An event whose settlement stayed unknown (or a reply whose world settlement was given up),
    kept with its evidence refs (message ids + hashes, never text) for an admin to release
    (re-queue for settlement) or discard."""

    __tablename__ = "story_quarantine"
    __table_args__ = (
        UniqueConstraint("state_id", "event_id", name="uq_story_quarantine_event"),
        Index("ix_story_quarantine_conversation", "conversation_id", "agent_id"),
        Index("ix_story_quarantine_created", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    state_id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), ForeignKey("story_states.id", ondelete="CASCADE"))
    owner_id: Mapped[str] = mapped_column(String(128))
    conversation_id: Mapped[str] = mapped_column(String(32), ForeignKey("conversations.id", ondelete="CASCADE"))
    agent_id: Mapped[str] = mapped_column(String(32))
    event_id: Mapped[str] = mapped_column(String(160))  # the settle key (event id, "#segment" after the first)
    reason: Mapped[str] = mapped_column(String(500))
    record: Mapped[dict[str, Any]] = mapped_column(JsonType)  # story.coordinator.envelope.QuarantineRecord
    status: Mapped[str] = mapped_column(String(16), default="quarantined")  # quarantined | released | discarded
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class StoryCheckpoint(Base):
    """A Story state as it was written, with the conversation's ``last_seq`` then (issue 27): a
    rewind to a message restores the newest checkpoint at or before it. Bounded per state."""

    __tablename__ = "story_checkpoints"
    __table_args__ = (Index("ix_story_checkpoints_state_seq", "state_id", "at_seq"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    state_id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), ForeignKey("story_states.id", ondelete="CASCADE"))
    revision: Mapped[int] = mapped_column(Integer)
    at_seq: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(32))
    envelope: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


# -- end issue 14 -------------------------------------------------------------------------------


# -- issue 10 (reconnect without losing the turn): the durable SSE event log -----------------------


class ConversationEvent(Base):
    """One SSE event of a conversation; ``id`` is the SSE ``id`` a client resumes from.

    Ids only grow (SQLite ``AUTOINCREMENT``; on PostgreSQL writers of one conversation are
    serialised by an advisory lock, so commit order is id order). Retention: ``app/events/log.py``.
    """

    __tablename__ = "conversation_events"
    __table_args__ = (
        Index("ix_conversation_events_conversation_id", "conversation_id", "id"),
        Index("ix_conversation_events_created", "created_at"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    conversation_id: Mapped[str] = mapped_column(String(32), ForeignKey("conversations.id", ondelete="CASCADE"))
    turn_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    event: Mapped[str] = mapped_column(String(64))
    data: Mapped[dict[str, Any]] = mapped_column(JsonType)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


# -- issue 28 (group controls): lore / world info ------------------------------------------------


class LoreEntry(Base):
    """A lore (world info) entry: its ``content`` joins an actor prompt when one of its ``keys``
    (and, when it has any, one of its ``secondary_keys``) is in the recent window. Attached to a
    conversation (``member_ids``: only those members' replies, None: all) or to an agent (only that
    agent's replies, in any conversation); exactly one of the two is set. ``app/lore/``."""

    __tablename__ = "lore_entries"
    __table_args__ = (
        CheckConstraint("(conversation_id IS NULL) <> (agent_id IS NULL)", name="one_owner"),
        Index("ix_lore_entries_conversation_id", "conversation_id"),
        Index("ix_lore_entries_agent_id", "agent_id"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    owner_id: Mapped[str] = mapped_column(String(128))  # the user who wrote it
    conversation_id: Mapped[str | None] = mapped_column(
        String(32), ForeignKey("conversations.id", ondelete="CASCADE"), nullable=True
    )
    agent_id: Mapped[str | None] = mapped_column(String(32), ForeignKey("agents.id", ondelete="CASCADE"), nullable=True)
    keys: Mapped[list[str]] = mapped_column(JsonType, default=list)
    secondary_keys: Mapped[list[str]] = mapped_column(JsonType, default=list)
    content: Mapped[str] = mapped_column(Text)
    priority: Mapped[int] = mapped_column(Integer, default=0)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    member_ids: Mapped[list[str] | None] = mapped_column(JsonType, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


# -- issue 28 (group controls): auto mode --------------------------------------------------------


class AutoRun(Base):
    """An auto-mode run (``app/auto``): the members talk among themselves for ``turns`` Continue
    turns (``turns.trigger = 'auto'``). ``running_lock`` holds the conversation id while it runs
    (unique: one run per conversation, whichever process asks); its lease is renewed by the process
    running it, and a run whose lease lapsed is ended ``interrupted``, never resumed."""

    __tablename__ = "auto_runs"
    __table_args__ = (
        CheckConstraint("status IN ('running', 'completed', 'stopped', 'interrupted', 'failed')", name="status"),
        Index("ix_auto_runs_conversation_started", "conversation_id", "started_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    conversation_id: Mapped[str] = mapped_column(String(32), ForeignKey("conversations.id", ondelete="CASCADE"))
    owner_id: Mapped[str] = mapped_column(String(128))
    status: Mapped[str] = mapped_column(String(16), default="running")
    turns: Mapped[int] = mapped_column(Integer)  # asked for
    turns_done: Mapped[int] = mapped_column(Integer, default=0)
    delay_ms: Mapped[int] = mapped_column(Integer, default=0)
    running_lock: Mapped[str | None] = mapped_column(String(32), nullable=True, unique=True)
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    stop_requested_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    stop_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)
    ended_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)
    last_turn_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    deadline_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
