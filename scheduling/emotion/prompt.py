"""The emotion stage prompt: judge the user's emotion and needs only.

Following the seed, this prompt never writes a reply and never picks speakers; a separate,
small call keeps it cheap and lets it run concurrently with intent.
"""

from __future__ import annotations

from scheduling.emotion.model import REASON_SCHEMA_CHARS, UserEmotion
from scheduling.ports import ChatMessage, ModelRequest

EMOTION_PURPOSE = "emotion"
EMOTION_SCHEMA_NAME = "user_emotion"

_SYSTEM_ZH = "\n".join([
    "你是 AI 电子伴侣群聊的用户情绪识别器。",
    "只判断用户本轮消息体现出的主要情绪、强度和陪伴需求，不要生成聊天回复，也不要选择由谁回复。",
    "需要区分用户是需要安慰、建议、降温，还是只是轻松闲聊。",
    "primaryEmotion 取值：neutral, happy, sad, anxious, angry, lonely, stressed, confused, romantic, playful, unknown。",
    f"intensity 为 0 到 1 的情绪强度；socialEnergy 为 low/medium/high 的社交能量；reason 用一句话说明依据（不超过 {REASON_SCHEMA_CHARS} 字）。",
    "只输出符合给定 JSON schema 的 JSON。",
])
_SYSTEM_EN = "\n".join([
    "You detect the user's emotion in an AI-companion group chat.",
    "Judge only the main emotion, its intensity and what the user needs from this message. "
    "Do not write a chat reply and do not choose who should reply.",
    "Distinguish whether the user needs comfort, advice, de-escalation, or is just chatting lightly.",
    "primaryEmotion is one of: neutral, happy, sad, anxious, angry, lonely, stressed, confused, romantic, playful, unknown.",
    "intensity is 0..1; socialEnergy is low/medium/high; reason explains the judgement in one short "
    f"sentence (at most {REASON_SCHEMA_CHARS} characters).",
    "Output only JSON that matches the given JSON schema.",
])


def _is_zh(language: str) -> bool:
    return language.lower().startswith("zh")


def build_emotion_request(text: str, recent_transcript: str, language: str) -> list[ChatMessage]:
    """Messages for the emotion call. ``recent_transcript`` gives context (see
    ``format_transcript``); only the last user message is judged."""
    if _is_zh(language):
        user = f"最近群聊：\n{recent_transcript or '（无）'}\n\n用户本轮消息：\n{text}\n\n请用 {language} 写 reason。"
        system = _SYSTEM_ZH
    else:
        user = (f"Recent group chat:\n{recent_transcript or '(none)'}\n\nThe user's message this turn:\n{text}\n\n"
                f"Write the reason in {language}.")
        system = _SYSTEM_EN
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]


def emotion_model_request(
    text: str, recent_transcript: str, language: str, *, timeout_s: float | None = None,
) -> ModelRequest:
    """The whole request; the caller asks for a ``UserEmotion`` with ``EMOTION_CONSTRAINTS``."""
    return ModelRequest(
        messages=build_emotion_request(text, recent_transcript, language),
        purpose=EMOTION_PURPOSE,
        temperature=0.0,
        timeout_s=timeout_s,
    )
