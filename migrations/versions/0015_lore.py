"""group controls: lore entries (issue 28)

* ``lore_entries``: keyword-triggered world info attached to a conversation (optionally only for
  some members, ``member_ids``) or to an agent (only its own replies); exactly one of
  ``conversation_id`` / ``agent_id`` is set. Which entries a reply used is in the reply's metadata
  (``lore``), read by the ``lore-use`` analytics query.

Revision ID: 0015_lore
Revises: 0014_member_models
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015_lore"
down_revision = "0014_member_models"
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "lore_entries",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("owner_id", sa.String(length=128), nullable=False),
        sa.Column("conversation_id", sa.String(length=32), nullable=True),
        sa.Column("agent_id", sa.String(length=32), nullable=True),
        sa.Column("keys", _JSON, nullable=False),
        sa.Column("secondary_keys", _JSON, nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("member_ids", _JSON, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("(conversation_id IS NULL) <> (agent_id IS NULL)", name=op.f("ck_lore_entries_one_owner")),
        sa.ForeignKeyConstraint(["conversation_id"], ["conversations.id"],
                                name=op.f("fk_lore_entries_conversation_id_conversations"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["agent_id"], ["agents.id"], name=op.f("fk_lore_entries_agent_id_agents"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lore_entries")),
    )  # fmt: skip
    op.create_index("ix_lore_entries_conversation_id", "lore_entries", ["conversation_id"])
    op.create_index("ix_lore_entries_agent_id", "lore_entries", ["agent_id"])


def downgrade() -> None:
    op.drop_index("ix_lore_entries_agent_id", table_name="lore_entries")
    op.drop_index("ix_lore_entries_conversation_id", table_name="lore_entries")
    op.drop_table("lore_entries")
