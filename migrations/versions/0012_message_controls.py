"""message controls: versions, rewind, stop (issue 27)

* ``message_versions``: every version of an agent message (text, model, why it exists, its own
  metadata); ``messages.selected_version`` names the one whose text the row carries.
* ``messages.hidden_at`` / ``hidden_by``: a message rewound away stays, as a hidden branch.
* ``story_checkpoints``: each Story state write with the conversation's ``last_seq`` then, so a
  rewind can restore the state current at a message.
* ``conversation_controls``: one row per regenerate, version switch, rewind and cancel (analytics).
* ``turns.cancel_requested_at`` and the new turn status ``cancelled``.

Revision ID: 0012_message_controls
Revises: 0011_selection_paths
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_message_controls"
down_revision = "0011_selection_paths"
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql")
_ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_OLD_STATUS = "status IN ('running', 'completed', 'failed')"
_NEW_STATUS = "status IN ('running', 'completed', 'failed', 'cancelled')"


def _turn_status(check: str) -> None:
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_turns_status"), type_="check")
        batch_op.create_check_constraint(op.f("ck_turns_status"), check)


def upgrade() -> None:
    op.create_table(
        "message_versions",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("message_id", sa.String(length=32), nullable=False),
        sa.Column("conversation_id", sa.String(length=32), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=True),
        sa.Column("reason", sa.String(length=32), nullable=False),
        sa.Column("metadata_json", _JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["message_id"], ["messages.id"], name=op.f("fk_message_versions_message_id_messages"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["conversation_id"], ["conversations.id"],
                                name=op.f("fk_message_versions_conversation_id_conversations"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_message_versions")),
        sa.UniqueConstraint("message_id", "number", name="uq_message_versions_message_number"),
    )
    op.create_index("ix_message_versions_conversation_created", "message_versions", ["conversation_id", "created_at"])
    op.create_table(
        "conversation_controls",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("conversation_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("agent_id", sa.String(length=32), nullable=True),
        sa.Column("message_id", sa.String(length=32), nullable=True),
        sa.Column("turn_id", sa.String(length=32), nullable=True),
        sa.Column("details", _JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["conversation_id"], ["conversations.id"],
                                name=op.f("fk_conversation_controls_conversation_id_conversations"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conversation_controls")),
    )
    op.create_index("ix_conversation_controls_created", "conversation_controls", ["created_at"])
    op.create_table(
        "story_checkpoints",
        sa.Column("id", _ROW_ID, autoincrement=True, nullable=False),
        sa.Column("state_id", _ROW_ID, nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("at_seq", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("envelope", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["state_id"], ["story_states.id"], name=op.f("fk_story_checkpoints_state_id_story_states"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_story_checkpoints")),
    )
    op.create_index("ix_story_checkpoints_state_seq", "story_checkpoints", ["state_id", "at_seq"])
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("selected_version", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("hidden_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("hidden_by", sa.String(length=32), nullable=True))
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.add_column(sa.Column("cancel_requested_at", sa.DateTime(timezone=True), nullable=True))
    _turn_status(_NEW_STATUS)


def downgrade() -> None:
    op.execute("UPDATE turns SET status = 'failed' WHERE status = 'cancelled'")
    _turn_status(_OLD_STATUS)
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.drop_column("cancel_requested_at")
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_column("hidden_by")
        batch_op.drop_column("hidden_at")
        batch_op.drop_column("selected_version")
    op.drop_index("ix_story_checkpoints_state_seq", table_name="story_checkpoints")
    op.drop_table("story_checkpoints")
    op.drop_index("ix_conversation_controls_created", table_name="conversation_controls")
    op.drop_table("conversation_controls")
    op.drop_index("ix_message_versions_conversation_created", table_name="message_versions")
    op.drop_table("message_versions")
