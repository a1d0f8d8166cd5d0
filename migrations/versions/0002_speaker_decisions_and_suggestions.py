"""speaker decisions and suggestions

Revision ID: 0002_decisions
Revises: 0001_core
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = '0002_decisions'
down_revision = '0001_core'
branch_labels = None
depends_on = None


def upgrade() -> None:
    
    op.create_table('speaker_decisions',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('turn_id', sa.String(length=32), nullable=False),
    sa.Column('conversation_id', sa.String(length=32), nullable=False),
    sa.Column('conversation_kind', sa.String(length=16), nullable=False),
    sa.Column('agent_id', sa.String(length=32), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('display_order', sa.Integer(), nullable=False),
    sa.Column('selected', sa.Boolean(), nullable=False),
    sa.Column('selected_by', sa.String(length=16), nullable=True),
    sa.Column('decided_by', sa.String(length=16), nullable=False),
    sa.Column('rank', sa.Integer(), nullable=False),
    sa.Column('score', sa.Float(), nullable=False),
    sa.Column('weights_version', sa.String(length=64), nullable=False),
    sa.Column('relationship_score', sa.Float(), nullable=False),
    sa.Column('relationship_stage', sa.String(length=32), nullable=False),
    sa.Column('freshness_score', sa.Float(), nullable=False),
    sa.Column('recent_reply_count', sa.Float(), nullable=False),
    sa.Column('spoke_last_turn', sa.Float(), nullable=False),
    sa.Column('comfort_match', sa.Float(), nullable=False),
    sa.Column('advice_match', sa.Float(), nullable=False),
    sa.Column('deescalation_match', sa.Float(), nullable=False),
    sa.Column('playful_match', sa.Float(), nullable=False),
    sa.Column('mentioned', sa.Float(), nullable=False),
    sa.Column('llm_selected', sa.Boolean(), nullable=True),
    sa.Column('primary_emotion', sa.String(length=16), nullable=False),
    sa.Column('intensity', sa.Float(), nullable=False),
    sa.Column('needs_comfort', sa.Boolean(), nullable=False),
    sa.Column('needs_advice', sa.Boolean(), nullable=False),
    sa.Column('needs_deescalation', sa.Boolean(), nullable=False),
    sa.Column('emotion_source', sa.String(length=16), nullable=False),
    sa.Column('synthetic', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['conversation_id'], ['conversations.id'], name=op.f('fk_speaker_decisions_conversation_id_conversations'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['turn_id'], ['turns.id'], name=op.f('fk_speaker_decisions_turn_id_turns'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_speaker_decisions')),
    sa.UniqueConstraint('turn_id', 'agent_id', name='uq_speaker_decisions_turn_agent')
    )
    with op.batch_alter_table('speaker_decisions', schema=None) as batch_op:
        batch_op.create_index('ix_speaker_decisions_agent_created', ['agent_id', 'created_at'], unique=False)
        batch_op.create_index('ix_speaker_decisions_conversation_created', ['conversation_id', 'created_at'], unique=False)
        batch_op.create_index('ix_speaker_decisions_created', ['created_at'], unique=False)

    op.create_table('suggestions',
    sa.Column('id', sa.String(length=32), nullable=False),
    sa.Column('conversation_id', sa.String(length=32), nullable=False),
    sa.Column('anchor_message_id', sa.String(length=32), nullable=False),
    sa.Column('turn_id', sa.String(length=32), nullable=True),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('options', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('fallback', sa.Boolean(), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('usage', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('model', sa.String(length=128), nullable=True),
    sa.Column('problems', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('synthetic', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("status IN ('generating', 'ready', 'failed', 'cleared')", name=op.f('ck_suggestions_status')),
    sa.ForeignKeyConstraint(['anchor_message_id'], ['messages.id'], name=op.f('fk_suggestions_anchor_message_id_messages'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['conversation_id'], ['conversations.id'], name=op.f('fk_suggestions_conversation_id_conversations'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_suggestions'))
    )
    with op.batch_alter_table('suggestions', schema=None) as batch_op:
        batch_op.create_index('ix_suggestions_conversation_created', ['conversation_id', 'created_at'], unique=False)
        batch_op.create_index('ix_suggestions_status', ['status'], unique=False)

    


def downgrade() -> None:
    
    with op.batch_alter_table('suggestions', schema=None) as batch_op:
        batch_op.drop_index('ix_suggestions_status')
        batch_op.drop_index('ix_suggestions_conversation_created')

    op.drop_table('suggestions')
    with op.batch_alter_table('speaker_decisions', schema=None) as batch_op:
        batch_op.drop_index('ix_speaker_decisions_created')
        batch_op.drop_index('ix_speaker_decisions_conversation_created')
        batch_op.drop_index('ix_speaker_decisions_agent_created')

    op.drop_table('speaker_decisions')
    
