"""group controls: mute a member (issue 28)

* ``conversation_members.muted``: a muted member is never selected by the model, the scorer or a
  reply order, only when named or asked to speak; it still witnesses the conversation.

Revision ID: 0013_member_mute
Revises: 0012_message_controls
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_member_mute"
down_revision = "0012_message_controls"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("conversation_members", schema=None) as batch_op:
        batch_op.add_column(sa.Column("muted", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("conversation_members", schema=None) as batch_op:
        batch_op.drop_column("muted")
