"""running-turn lease with heartbeat (issue 11)

Revision ID: 0008_turn_lease
Revises: 0007_story_quarantine
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_turn_lease"
down_revision = "0007_story_quarantine"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("turns", sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("turns", "lease_expires_at")
