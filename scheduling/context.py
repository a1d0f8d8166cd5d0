"""Speaking context: every signal about every agent that selection needs, in one value.

Same shape as the seed's ``AgentSpeakingContext`` / ``GroupSpeakingContext`` (camelCase JSON),
so it can be put in a prompt and stored in message metadata as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from scheduling.emotion.model import UserEmotion
from scheduling.freshness import DEFAULT_WINDOW, compute_freshness
from scheduling.presence import Presence
from scheduling.profiles import AgentProfile, DirectChatStats, GroupMessage
from scheduling.relationship import RelationshipStage, relationship_from_direct_chat


class AgentSpeakingContext(msgspec.Struct, frozen=True, rename="camel"):
    agent_id: str
    conversation_message_count: int
    recent_reply_count: int
    last_spoke_turns_ago: int | None
    relationship_stage: RelationshipStage
    relationship_score: float
    freshness_score: float
    conversation_last_message_at_ms: int | None = None
    # presence: messages of the window this agent did not witness (joined later); 0 with history "all"
    missed_messages: int = 0


class GroupSpeakingContext(msgspec.Struct, frozen=True, rename="camel"):
    user_emotion: UserEmotion
    agent_contexts: list[AgentSpeakingContext]

    def for_agent(self, agent_id: str) -> AgentSpeakingContext | None:
        return next((c for c in self.agent_contexts if c.agent_id == agent_id), None)


def build_speaking_context(
    agents: Sequence[AgentProfile],
    direct_stats: Mapping[str, DirectChatStats | int],
    recent_messages: Sequence[GroupMessage],
    user_emotion: UserEmotion,
    *,
    window: int = DEFAULT_WINDOW,
    current_user_seq: int | None = None,
    presence: Presence | None = None,
) -> GroupSpeakingContext:
    """``direct_stats`` maps agent id → the user's direct-chat stats (or just its message
    count); an agent the user never talked to alone is a new connection. With ``presence`` each
    agent's signals come from the messages it witnessed, and ``missedMessages`` says how many of
    the window it did not (a member added later has not heard what came before)."""
    ids = [a.id for a in agents]
    if presence is None:
        freshness = compute_freshness(recent_messages, ids, window=window, current_user_seq=current_user_seq)
        missed = dict.fromkeys(ids, 0)
    else:
        freshness, missed = {}, {}
        for agent_id in ids:
            seen = presence.window(recent_messages, agent_id)
            freshness.update(compute_freshness(seen, [agent_id], window=window, current_user_seq=current_user_seq))
            missed[agent_id] = len(recent_messages) - len(seen)
    contexts = []
    for agent in sorted(agents, key=lambda a: (a.display_order, a.id)):
        stats = direct_stats.get(agent.id, 0)
        if isinstance(stats, int):
            stats = DirectChatStats(message_count=stats)
        rel = relationship_from_direct_chat(stats.message_count, stats.last_message_at_ms)
        fresh = freshness[agent.id]
        contexts.append(AgentSpeakingContext(
            agent_id=agent.id,
            conversation_message_count=rel.conversation_message_count,
            recent_reply_count=fresh.recent_reply_count,
            last_spoke_turns_ago=fresh.last_spoke_turns_ago,
            relationship_stage=rel.stage,
            relationship_score=rel.score,
            freshness_score=fresh.freshness_score,
            conversation_last_message_at_ms=rel.conversation_last_message_at_ms,
            missed_messages=missed[agent.id],
        ))
    return GroupSpeakingContext(user_emotion=user_emotion, agent_contexts=contexts)
