"""speaker decisions: the selection mode, the path that decided, the scorer's margin, agreement

Per turn, on every candidate row (like ``decided_by``): ``selection_mode`` (the conversation's
``selection.mode``: llm | scorer | hybrid), ``selection_path`` (mention | scorer | llm | fallback |
direct | continue), ``scorer_margin`` (the scorer's last pick minus the best candidate it left out)
and ``llm_agreed`` (the model's valid choice gave the scorer's pick). Nullable: rows written before
this revision did not record them, and are not guessed at.

Revision ID: 0011_selection_paths
Revises: 0010_story_background_adoption
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_selection_paths"
down_revision = "0010_story_background_adoption"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("speaker_decisions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("selection_mode", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("selection_path", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("scorer_margin", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("llm_agreed", sa.Boolean(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("speaker_decisions", schema=None) as batch_op:
        batch_op.drop_column("llm_agreed")
        batch_op.drop_column("scorer_margin")
        batch_op.drop_column("selection_path")
        batch_op.drop_column("selection_mode")
