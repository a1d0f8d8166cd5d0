"""Step 1 of a turn: what the turn knows before any model call (one reading session, four queries)."""

from __future__ import annotations

import msgspec
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.conversations.settings import ConversationSettings
from app.db.engine import reads_only
from app.db.models import Conversation
from app.turns import loader
from app.turns.loader import LoadedAgents
from app.turns.plugins import TurnInfo
from app.turns.repository import StartedTurn
from app.lore.service import entries_for_turn
from scheduling import AgentProfile, DirectChatStats, format_transcript
from scheduling.lore import LoreEntry
from scheduling.presence import Presence


class TurnContext(msgspec.Struct, kw_only=True):
    info: TurnInfo
    agents: LoadedAgents
    stats: dict[str, DirectChatStats]
    transcript: str
    direct: bool
    lore: list[LoreEntry] = []  # the conversation's and its members' enabled lore entries
    resting: tuple[str, ...] = ()  # an auto turn: who spoke last, not chosen again at once (unless alone)

    @property
    def config(self) -> ConversationSettings:
        return self.info.config

    def names(self) -> dict[str, str]:
        return {p.id: p.name for p in self.agents.profiles}

    def candidates(self) -> list[AgentProfile]:
        """The members the turn may choose on its own: not muted (a muted one answers only when named)."""
        return [p for p in self.info.agents if p.id not in self.agents.muted]

    def others(self, agent_id: str) -> list[str]:
        return [p.name for p in self.agents.profiles if p.id != agent_id]


async def load_context(sessions: async_sessionmaker[AsyncSession], started: StartedTurn, window: int,
                       continue_agent_id: str | None = None) -> TurnContext:  # fmt: skip
    """A turn without a user message is a Continue: it continues from the last user message."""
    turn, conv, user_msg = started.turn, started.conversation, started.user_message
    async with sessions() as session:
        await reads_only(session)
        agents = await loader.load_agents(session, conv.id)
        stats = await loader.direct_stats(session, turn.owner_id, [p.id for p in agents.profiles])
        lore = await entries_for_turn(session, conv.id, agents.rows)
        if user_msg is None:
            anchor = await loader.last_user_message(session, conv.id)
            seq = int(await session.scalar(select(Conversation.last_seq).where(Conversation.id == conv.id)) or 0) + 1
            recent = await loader.recent_messages(session, conv.id, window, before_seq=seq)
            anchor_id, text = (anchor.id, anchor.content) if anchor else ("", "")
        else:
            recent = await loader.recent_messages(session, conv.id, window, before_seq=user_msg.seq)
            anchor_id, seq, text = user_msg.id, user_msg.seq, user_msg.content
    config = msgspec.convert(conv.settings or {}, ConversationSettings)
    info = TurnInfo(
        turn_id=turn.id, owner_id=turn.owner_id, conversation_id=conv.id, conversation_kind=conv.kind,
        settings=dict(conv.settings or {}), config=config, language=config.language, user_message_id=anchor_id,
        user_message_seq=seq, user_text=text, agents=agents.profiles, agent_rows=agents.rows, recent=recent,
        continuation=user_msg is None, continue_agent_id=continue_agent_id,
        presence=Presence(mode=config.history, joined=agents.joined),
    )  # fmt: skip
    transcript = format_transcript(recent, agents.profiles, limit=window)
    last = next((m.agent_id for m in reversed(recent) if m.role == "agent" and m.agent_id), None)
    resting = (last,) if turn.trigger == "auto" and last else ()
    return TurnContext(info=info, agents=agents, stats=stats, transcript=transcript, direct=conv.kind == "direct",
                       lore=lore, resting=resting)  # fmt: skip
