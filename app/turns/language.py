"""The one-line "reply only in X" instruction, written in X itself.

Used when a reply came back in the wrong language or script: the regeneration request starts with
this line as a system message, so the very first thing the model reads is the language, in that
language (an English instruction to write Chinese is easy to answer in English).
"""

from __future__ import annotations

from story.auto_reply.text import is_chinese, language_label, primary_language

_SIMPLIFIED_CHINESE = "请只用简体中文回复。"
_TRADITIONAL_CHINESE = "請只用繁體中文回覆。"
_TRADITIONAL_MARKERS = frozenset({"hant", "tw", "hk", "mo"})

INSTRUCTIONS = {
    "en": "Reply in English only.",
    "ja": "日本語だけで返信してください。",
    "ko": "한국어로만 답장하세요.",
    "fr": "Réponds uniquement en français.",
    "de": "Antworte nur auf Deutsch.",
    "es": "Responde solo en español.",
    "pt": "Responda apenas em português.",
    "it": "Rispondi solo in italiano.",
    "ru": "Отвечай только на русском языке.",
    "vi": "Chỉ trả lời bằng tiếng Việt.",
}


def language_instruction(tag: str) -> str:
    """E.g. ``zh-CN`` → ``请只用简体中文回复。``, ``en`` → ``Reply in English only.``; a language without a
    written-out line gets the English form naming it (``Reply in Thai (th) only.``)."""
    primary = primary_language(tag)
    if is_chinese(tag):
        subtags = set(tag.strip().replace("_", "-").lower().split("-")[1:])
        if (primary == "yue" or subtags & _TRADITIONAL_MARKERS) and "hans" not in subtags:
            return _TRADITIONAL_CHINESE
        return _SIMPLIFIED_CHINESE
    return INSTRUCTIONS.get(primary) or f"Reply in {language_label(tag) or 'the conversation language'} only."
