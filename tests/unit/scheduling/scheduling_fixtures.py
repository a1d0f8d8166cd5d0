"""Shared builders for the scheduling tests (a plain module, not a conftest, to keep names unique)."""

from __future__ import annotations

from scheduling import (
    AgentCapabilities, AgentProfile, GroupMessage, UserEmotion, UserIntent, build_speaking_context,
)

GENTLE = AgentProfile(
    id="gentle", name="小暖", aliases=("暖暖",), headline="温柔的倾听者",
    personality_prompt="温柔、善于倾听和共情，总是陪伴用户", display_order=0,
)
PLANNER = AgentProfile(
    id="planner", name="阿哲", headline="理性的规划师",
    personality_prompt="理性、清醒，擅长分析、复盘和制定计划", display_order=1,
)
JOKER = AgentProfile(
    id="joker", name="豆豆", headline="活泼的开心果", personality_prompt="活泼幽默，爱开玩笑", display_order=2,
)
CALM = AgentProfile(
    id="calm", name="Sam", headline="Calm and mature", personality_prompt="Composed, keeps firm boundaries",
    display_order=3,
)
TEAM = [GENTLE, PLANNER, JOKER, CALM]


def emotion(**overrides) -> UserEmotion:
    values = dict(primary_emotion="neutral", intensity=0.3, needs_comfort=False, needs_advice=False,
                  needs_deescalation=False, social_energy="medium", reason="test")
    values.update(overrides)
    return UserEmotion(**values)


def intent(kind="chit_chat", addressed=(), many=False) -> UserIntent:
    return UserIntent(kind=kind, addressed_agent_ids=list(addressed), wants_multiple_voices=many)


def context(agents=TEAM, direct=None, messages=(), user_emotion=None):
    return build_speaking_context(agents, direct or {}, list(messages), user_emotion or emotion())


def agent_turns(*speakers: str | None) -> list[GroupMessage]:
    """History where each entry is one turn: a user message then the named agent (None: no reply)."""
    out, seq = [], 0
    for speaker in speakers:
        seq += 1
        out.append(GroupMessage(role="user", seq=seq, content="hi"))
        if speaker is not None:
            seq += 1
            out.append(GroupMessage(role="agent", seq=seq, agent_id=speaker, content="hello"))
    return out


def tagged(agent: AgentProfile, **caps) -> AgentProfile:
    import msgspec
    return msgspec.structs.replace(agent, capabilities=AgentCapabilities(**caps))
