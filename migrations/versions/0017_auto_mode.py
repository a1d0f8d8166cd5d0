"""group controls: auto mode (issue 28)

* ``auto_runs``: one row per auto-mode run; ``running_lock`` (unique, the conversation id while it
  runs) makes "one run per conversation" a database fact across server processes; a lease like a
  turn's, so a run whose process is gone is ended ``interrupted`` and never resumed.
* ``turns.trigger``: what started a turn (``user``, ``continue``, ``regenerate``, ``auto``);
  existing rows are labelled ``user`` or ``continue`` from whether they have a user message
  (a regeneration before this revision reads as ``continue``).

Revision ID: 0017_auto_mode
Revises: 0016_presence
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017_auto_mode"
down_revision = "0016_presence"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "auto_runs",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("conversation_id", sa.String(length=32), nullable=False),
        sa.Column("owner_id", sa.String(length=128), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("turns", sa.Integer(), nullable=False),
        sa.Column("turns_done", sa.Integer(), nullable=False),
        sa.Column("delay_ms", sa.Integer(), nullable=False),
        sa.Column("running_lock", sa.String(length=32), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("stop_requested_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("stop_reason", sa.String(length=32), nullable=True),
        sa.Column("ended_reason", sa.String(length=32), nullable=True),
        sa.Column("last_turn_id", sa.String(length=32), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deadline_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("status IN ('running', 'completed', 'stopped', 'interrupted', 'failed')",
                           name=op.f("ck_auto_runs_status")),
        sa.ForeignKeyConstraint(["conversation_id"], ["conversations.id"],
                                name=op.f("fk_auto_runs_conversation_id_conversations"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_auto_runs")),
        sa.UniqueConstraint("running_lock", name=op.f("uq_auto_runs_running_lock")),
    )
    op.create_index("ix_auto_runs_conversation_started", "auto_runs", ["conversation_id", "started_at"])
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.add_column(sa.Column("trigger", sa.String(length=16), nullable=True))
    op.execute("""UPDATE turns SET "trigger" = CASE WHEN user_message_id IS NULL THEN 'continue' ELSE 'user' END""")


def downgrade() -> None:
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.drop_column("trigger")
    op.drop_index("ix_auto_runs_conversation_started", table_name="auto_runs")
    op.drop_table("auto_runs")
