"""analytics indexes

Per-turn analytics read the rank-1 decision row per turn in a time range; cross-reply, quality,
usage and suggestion figures filter messages, metrics and suggestions by time alone.

Revision ID: 0005_analytics
Revises: 0004_story_states
Create Date: 2026-11-29
"""

from __future__ import annotations

from alembic import op

revision = '0005_analytics'
down_revision = '0004_story_states'
branch_labels = None
depends_on = None

INDEXES = (
    ("ix_speaker_decisions_rank_created", "speaker_decisions", ["rank", "created_at"]),
    ("ix_messages_created", "messages", ["created_at"]),
    ("ix_suggestions_created", "suggestions", ["created_at"]),
    ("ix_turn_stage_metrics_created", "turn_stage_metrics", ["created_at"]),
)


def upgrade() -> None:
    for name, table, columns in INDEXES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.create_index(name, columns, unique=False)


def downgrade() -> None:
    for name, table, _ in reversed(INDEXES):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_index(name)
