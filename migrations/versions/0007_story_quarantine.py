"""story quarantine records outside the state (issue 14)

Revision ID: 0007_story_quarantine
Revises: 0006_analytics_speedups
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op  # noqa: F401

revision = "0007_story_quarantine"
down_revision = "0006_analytics_speedups"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
