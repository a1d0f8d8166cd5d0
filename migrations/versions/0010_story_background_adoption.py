"""story states: the background adoption of the pending reply (issue 10)

Revision ID: 0010_story_background_adoption
Revises: 0009_conversation_events
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0010_story_background_adoption"
down_revision = "0009_conversation_events"
branch_labels = None
depends_on = None

JSON_TYPE = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("story_states", schema=None) as batch_op:
        batch_op.add_column(sa.Column("adopted_envelope", sa.LargeBinary(), nullable=True))
        batch_op.add_column(sa.Column("adoption", JSON_TYPE, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("story_states", schema=None) as batch_op:
        batch_op.drop_column("adoption")
        batch_op.drop_column("adopted_envelope")
