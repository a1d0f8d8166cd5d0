"""turn stage metrics and quality events

Revision ID: 0003_metrics
Revises: 0002_decisions
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0003_metrics'
down_revision = '0002_decisions'
branch_labels = None
depends_on = None


def upgrade() -> None:
    
    op.create_table('quality_events',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('turn_id', sa.String(length=32), nullable=False),
    sa.Column('conversation_id', sa.String(length=32), nullable=False),
    sa.Column('agent_id', sa.String(length=32), nullable=False),
    sa.Column('reply_kind', sa.String(length=16), nullable=False),
    sa.Column('reason', sa.String(length=64), nullable=False),
    sa.Column('action', sa.String(length=16), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('synthetic', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['conversation_id'], ['conversations.id'], name=op.f('fk_quality_events_conversation_id_conversations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['turn_id'], ['turns.id'], name=op.f('fk_quality_events_turn_id_turns'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_quality_events'))
    )
    with op.batch_alter_table('quality_events', schema=None) as batch_op:
        batch_op.create_index('ix_quality_events_created', ['created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_quality_events_turn_id'), ['turn_id'], unique=False)

    op.create_table('turn_stage_metrics',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('turn_id', sa.String(length=32), nullable=False),
    sa.Column('conversation_id', sa.String(length=32), nullable=False),
    sa.Column('stage', sa.String(length=32), nullable=False),
    sa.Column('agent_id', sa.String(length=32), nullable=True),
    sa.Column('ms', sa.Float(), nullable=False),
    sa.Column('input_tokens', sa.Integer(), nullable=False),
    sa.Column('output_tokens', sa.Integer(), nullable=False),
    sa.Column('estimated', sa.Boolean(), nullable=False),
    sa.Column('outcome', sa.String(length=32), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('synthetic', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['conversation_id'], ['conversations.id'], name=op.f('fk_turn_stage_metrics_conversation_id_conversations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['turn_id'], ['turns.id'], name=op.f('fk_turn_stage_metrics_turn_id_turns'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_turn_stage_metrics'))
    )
    with op.batch_alter_table('turn_stage_metrics', schema=None) as batch_op:
        batch_op.create_index('ix_turn_stage_metrics_stage_created', ['stage', 'created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_turn_stage_metrics_turn_id'), ['turn_id'], unique=False)

    


def downgrade() -> None:
    
    with op.batch_alter_table('turn_stage_metrics', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_turn_stage_metrics_turn_id'))
        batch_op.drop_index('ix_turn_stage_metrics_stage_created')

    op.drop_table('turn_stage_metrics')
    with op.batch_alter_table('quality_events', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_quality_events_turn_id'))
        batch_op.drop_index('ix_quality_events_created')

    op.drop_table('quality_events')
    
