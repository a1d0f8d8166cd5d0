"""running-turn lease with heartbeat (issue 11)

Revision ID: 0008_turn_lease
Revises: 0007_story_quarantine
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op  # noqa: F401

revision = "0008_turn_lease"
down_revision = "0007_story_quarantine"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
