"""group controls: a model per member (issue 28)

* ``agents.model_config_id``: the model config an agent's replies are written with (one of the
  app's ``[llm.models]``); NULL keeps the actor stage's model.
* ``turn_stage_metrics.model_config_id``: the model config of a reply's row, so cost and drop rate
  can be read per model.

Revision ID: 0014_member_models
Revises: 0013_member_mute
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014_member_models"
down_revision = "0013_member_mute"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.add_column(sa.Column("model_config_id", sa.String(length=64), nullable=True))
    with op.batch_alter_table("turn_stage_metrics", schema=None) as batch_op:
        batch_op.add_column(sa.Column("model_config_id", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("turn_stage_metrics", schema=None) as batch_op:
        batch_op.drop_column("model_config_id")
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.drop_column("model_config_id")
