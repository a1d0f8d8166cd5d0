"""analytics speedups

``latency`` and ``usage`` read ``turn_stage_metrics`` per stage in (ms) and (turn_id) order: the
nearest-rank percentiles come from a running count over (stage, ms) and the turns per stage from
distinct (stage, turn_id) pairs. With ``created_at`` as the last column both are index-only
scans that also serve the time filter, instead of sorting ~2M rows.

Revision ID: 0006_analytics_speedups
Revises: 0005_analytics
Create Date: 2026-11-29
"""

from __future__ import annotations

from alembic import op

revision = "0006_analytics_speedups"
down_revision = "0005_analytics"
branch_labels = None
depends_on = None

INDEXES = (
    ("ix_turn_stage_metrics_stage_ms_created", "turn_stage_metrics", ["stage", "ms", "created_at"]),
    ("ix_turn_stage_metrics_stage_turn_created", "turn_stage_metrics", ["stage", "turn_id", "created_at"]),
)


def upgrade() -> None:
    for name, table, columns in INDEXES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.create_index(name, columns, unique=False)


def downgrade() -> None:
    for name, table, _ in reversed(INDEXES):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_index(name)
