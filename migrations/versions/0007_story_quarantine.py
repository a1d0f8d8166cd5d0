"""story quarantine records outside the state (issue 14)

Quarantined Story events move from the state (and the ``story_states.quarantine`` copy) to their
own table, with retention by count and age (``app/story/repository.py``). Records already saved
in ``story_states.quarantine`` are copied over; the column stays (unused) for older servers.

Revision ID: 0007_story_quarantine
Revises: 0006_analytics_speedups
Create Date: 2026-12-01
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0007_story_quarantine"
down_revision = "0006_analytics_speedups"
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "story_quarantine",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("state_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("owner_id", sa.String(length=128), nullable=False),
        sa.Column("conversation_id", sa.String(length=32), nullable=False),
        sa.Column("agent_id", sa.String(length=32), nullable=False),
        sa.Column("event_id", sa.String(length=160), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=False),
        sa.Column("record", _JSON, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["state_id"], ["story_states.id"], name=op.f("fk_story_quarantine_state_id_story_states"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["conversation_id"], ["conversations.id"],
                                name=op.f("fk_story_quarantine_conversation_id_conversations"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_story_quarantine")),
        sa.UniqueConstraint("state_id", "event_id", name="uq_story_quarantine_event"),
    )
    op.create_index("ix_story_quarantine_conversation", "story_quarantine", ["conversation_id", "agent_id"])
    op.create_index("ix_story_quarantine_created", "story_quarantine", ["created_at"])
    _copy_saved_records()


def _copy_saved_records() -> None:
    states = sa.table("story_states", sa.column("id"), sa.column("owner_id"), sa.column("conversation_id"),
                      sa.column("agent_id"), sa.column("quarantine", sa.JSON()))
    target = sa.table("story_quarantine", *(sa.column(c) for c in (
        "id", "state_id", "owner_id", "conversation_id", "agent_id", "event_id", "reason", "status", "created_at")),
        sa.column("record", sa.JSON()))
    bind = op.get_bind()
    now = datetime.now(UTC)
    for row in bind.execute(sa.select(states)).all():
        seen: set[str] = set()
        for rec in row.quarantine or []:
            if not isinstance(rec, dict) or not rec.get("event_id") or rec["event_id"] in seen:
                continue
            seen.add(rec["event_id"])
            bind.execute(sa.insert(target).values(
                id=uuid.uuid4().hex, state_id=row.id, owner_id=row.owner_id, conversation_id=row.conversation_id,
                agent_id=row.agent_id, event_id=str(rec["event_id"])[:160], reason=str(rec.get("reason", ""))[:500],
                record=rec, status="quarantined", created_at=now,
            ))


def downgrade() -> None:
    op.drop_index("ix_story_quarantine_created", table_name="story_quarantine")
    op.drop_index("ix_story_quarantine_conversation", table_name="story_quarantine")
    op.drop_table("story_quarantine")
