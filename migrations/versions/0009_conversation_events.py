"""conversation event log for SSE replay (issue 10)

Revision ID: 0009_conversation_events
Revises: 0008_turn_lease
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op  # noqa: F401

revision = "0009_conversation_events"
down_revision = "0008_turn_lease"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
