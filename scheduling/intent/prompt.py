"""The intent stage prompt: classify what the user wants from the group, nothing else."""

from __future__ import annotations

from collections.abc import Sequence

from scheduling.intent.model import UserIntent
from scheduling.ports import ChatMessage, ModelRequest
from scheduling.profiles import AgentProfile

INTENT_PURPOSE = "intent"
INTENT_SCHEMA_NAME = "user_intent"

_KINDS = "chit_chat, question, advice_request, emotional_share, address_specific, address_all, other"


def _roster(agents: Sequence[AgentProfile]) -> str:
    return "\n".join(
        f"- id={a.id} name={a.name}" + (f" aliases={'/'.join(a.aliases)}" if a.aliases else "") for a in agents
    )


def build_intent_request(
    text: str, agents: Sequence[AgentProfile], recent_transcript: str, language: str,
) -> list[ChatMessage]:
    if language.lower().startswith("zh"):
        system = "\n".join([
            "你是 AI 电子伴侣群聊的意图识别器。只判断用户本轮消息的意图，不要生成回复，也不要选择由谁回复。",
            f"kind 取值：{_KINDS}。",
            "用户点名某个 Agent（名字、别名或 @）时 kind=address_specific，并在 addressedAgentIds 中列出这些 Agent 的 id；"
            "用户问你们、大家、各位时 kind=address_all，addressedAgentIds 为空。",
            "只有用户明确询问大家意见、要求分别回答或想听多个角度时，wantsMultipleVoices 才为 true。",
            "addressedAgentIds 只能使用下面给出的 id；reason 用一句话说明（不超过 120 字）。只输出符合 JSON schema 的 JSON。",
        ])
        user = f"群聊成员：\n{_roster(agents)}\n\n最近群聊：\n{recent_transcript or '（无）'}\n\n用户本轮消息：\n{text}"
    else:
        system = "\n".join([
            "You classify the user's intent in an AI-companion group chat. Classify only; do not reply "
            "and do not choose who replies.",
            f"kind is one of: {_KINDS}.",
            "If the user names agents (name, alias or @), kind=address_specific and addressedAgentIds lists "
            "their ids; if the user addresses everyone (you all, everyone), kind=address_all with an empty list.",
            "wantsMultipleVoices is true only when the user asks everyone, asks each to answer, or wants "
            "several perspectives.",
            "Use only the ids given below; reason is one short sentence (at most 120 characters). Output only JSON "
            "that matches the JSON schema.",
        ])
        user = (f"Group members:\n{_roster(agents)}\n\nRecent group chat:\n{recent_transcript or '(none)'}\n\n"
                f"The user's message this turn:\n{text}")
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]


def intent_model_request(
    text: str, agents: Sequence[AgentProfile], recent_transcript: str, language: str, *, timeout_s: float | None = None,
) -> ModelRequest:
    return ModelRequest(
        messages=build_intent_request(text, agents, recent_transcript, language),
        purpose=INTENT_PURPOSE,
        temperature=0.0,
        timeout_s=timeout_s,
    )
