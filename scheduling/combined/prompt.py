"""The combined prompt: the three judgements the staged pipeline asks in three calls, asked in
one, each into its own field. The speaker rules are the selector's own (``selection_rules``); the
speaking context is the selector's without the emotion line (the model judges the emotion here)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import get_args

from scheduling.context import GroupSpeakingContext
from scheduling.emotion.model import REASON_SCHEMA_CHARS, PrimaryEmotion
from scheduling.intent.model import INTENT_REASON_MAX_CHARS, IntentKind
from scheduling.ports import ChatMessage, ModelRequest
from scheduling.profiles import AgentProfile
from scheduling.selection.prompt import format_agents, format_speaking_context, selection_rules

COMBINED_PURPOSE = "combined"
COMBINED_SCHEMA_NAME = "turn_reading"


def _system_zh(reply_limit: int, chattiness: str) -> str:
    return "\n".join([
        "你是 AI 电子伴侣群聊的调度器。对用户本轮消息做三个独立的判断，分别写进三个字段，再计划回复之后的互动，不要生成聊天回复。",
        f"1. intent：用户想从群里得到什么。kind 取值：{', '.join(get_args(IntentKind))}。"
        "用户点名某个 Agent（名字、别名或 @）时 kind=address_specific，addressedAgentIds 列出其 id；"
        "问你们、大家、各位时 kind=address_all，addressedAgentIds 为空。只有用户明确询问大家意见、要求分别回答或想听多个角度时，"
        f"wantsMultipleVoices 才为 true。reason 一句话（不超过 {INTENT_REASON_MAX_CHARS} 字）。",
        f"2. emotion：用户的主要情绪、强度和陪伴需求。primaryEmotion 取值：{', '.join(get_args(PrimaryEmotion))}。"
        "intensity 为 0 到 1；区分用户需要安慰（needsComfort）、建议（needsAdvice）、降温（needsDeescalation），还是只是轻松闲聊；"
        f"socialEnergy 为 low/medium/high；reason 一句话（不超过 {REASON_SCHEMA_CHARS} 字）。",
        "3. speakers：根据上面两项判断、Agent 人设、关系阶段和最近发言频率，选择最适合回复的 Agent。",
        *selection_rules("zh", reply_limit, chattiness),
        "4. crossReply：选中的 Agent 回复之后，是否让一位成员简短回应另一位的回复（附和、打趣、不同看法）。"
        "只有用户的话引出来回讨论（两难选择、争论、想听不同角度）时才填：toAgentId 是 speakers 选中的一位，"
        "fromAgentId 是另一位成员；大多数回合填 null。",
    ])


def _system_en(reply_limit: int, chattiness: str) -> str:
    return "\n".join([
        "You schedule an AI-companion group chat. Make three separate judgements of the user's message, each "
        "into its own field, then plan what follows the replies. Do not write a chat reply.",
        f"1. intent: what the user wants from the group. kind is one of: {', '.join(get_args(IntentKind))}. If the "
        "user names agents (name, alias or @), kind=address_specific and addressedAgentIds lists their ids; if the "
        "user addresses everyone, kind=address_all with an empty list. wantsMultipleVoices is true only when the "
        "user asks everyone, asks each to answer, or wants several perspectives. reason: one short sentence "
        f"(at most {INTENT_REASON_MAX_CHARS} characters).",
        f"2. emotion: the user's main emotion, its intensity and needs. primaryEmotion is one of: "
        f"{', '.join(get_args(PrimaryEmotion))}. intensity is 0..1; tell apart needing comfort (needsComfort), "
        "advice (needsAdvice), de-escalation (needsDeescalation), or light chat; socialEnergy is low/medium/high; "
        f"reason: one short sentence (at most {REASON_SCHEMA_CHARS} characters).",
        "3. speakers: using the two judgements above, each agent's persona, relationship stage and how often it "
        "spoke recently, choose the agent(s) best suited to reply.",
        *selection_rules("en", reply_limit, chattiness),
        "4. crossReply: after the chosen agents reply, should one member briefly answer another's reply (agreement, "
        "a playful remark, a different view)? Only when the message invites a back-and-forth (a dilemma, an "
        "argument, a wish for different views): toAgentId is one of the chosen speakers, fromAgentId another "
        "member. Most turns: null.",
    ])


def build_combined_request(
    *, text: str, agents: Sequence[AgentProfile], context: GroupSpeakingContext, reply_limit: int, language: str,
    recent_transcript: str = "", chattiness: str = "balanced", mentioned_ids: Sequence[str] = (),
) -> list[ChatMessage]:
    zh = language.lower().startswith("zh")
    system = (_system_zh if zh else _system_en)(reply_limit, chattiness)
    roster = format_agents(agents) + "".join(
        f"\n  aliases of {a.id}: {'/'.join(a.aliases)}" for a in agents if a.aliases
    )
    sections = [
        ("群聊 Agent" if zh else "Agents", roster),
        ("被点名的 Agent" if zh else "Named by the user", ", ".join(mentioned_ids) or ("无" if zh else "none")),
        ("发言权上下文" if zh else "Speaking context", format_speaking_context(context, agents, with_emotion=False)),
        ("最近群聊" if zh else "Recent group chat", recent_transcript or ("（无）" if zh else "(none)")),
        ("用户本轮消息" if zh else "The user's message this turn", text),
    ]
    user = "\n\n".join(f"{title}{'：' if zh else ':'}\n{body}" for title, body in sections)
    user += f"\n\n请用 {language} 写 reason。" if zh else f"\n\nWrite the reasons in {language}."
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]


def combined_model_request(*, timeout_s: float | None = None, **kwargs) -> ModelRequest:
    """``build_combined_request`` as a request; the caller asks for a ``TurnReading`` with
    ``reading_constraints`` (the members' ids as ``enum``s)."""
    return ModelRequest(messages=build_combined_request(**kwargs), purpose=COMBINED_PURPOSE, temperature=0.0,
                        timeout_s=timeout_s)  # fmt: skip
