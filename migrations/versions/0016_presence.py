"""group controls: presence (issue 28)

* ``messages.present_agent_ids``: the members (agent ids) present when the message was saved, muted
  ones included; NULL for messages saved before presence (then ``joined_seq`` decides).
* ``conversation_members.joined_seq``: the conversation's ``last_seq`` when the member joined; 0 for
  the members that were there before (present since the start).

Revision ID: 0016_presence
Revises: 0015_lore
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0016_presence"
down_revision = "0015_lore"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("present_agent_ids", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
                                      nullable=True))
    with op.batch_alter_table("conversation_members", schema=None) as batch_op:
        batch_op.add_column(sa.Column("joined_seq", sa.BigInteger(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("conversation_members", schema=None) as batch_op:
        batch_op.drop_column("joined_seq")
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_column("present_agent_ids")
