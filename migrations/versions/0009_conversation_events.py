"""conversation event log for SSE replay (issue 10)

Revision ID: 0009_conversation_events
Revises: 0008_turn_lease
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0009_conversation_events"
down_revision = "0008_turn_lease"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "conversation_events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("conversation_id", sa.String(length=32), nullable=False),
        sa.Column("turn_id", sa.String(length=32), nullable=True),
        sa.Column("event", sa.String(length=64), nullable=False),
        sa.Column("data", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"], ["conversations.id"],
            name=op.f("fk_conversation_events_conversation_id_conversations"), ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conversation_events")),
        sqlite_autoincrement=True,  # ids are SSE ids: never reused, even after every row is pruned
    )
    op.create_index("ix_conversation_events_conversation_id", "conversation_events", ["conversation_id", "id"])
    op.create_index("ix_conversation_events_created", "conversation_events", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_conversation_events_created", table_name="conversation_events")
    op.drop_index("ix_conversation_events_conversation_id", table_name="conversation_events")
    op.drop_table("conversation_events")
