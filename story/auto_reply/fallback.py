"""Conservative options, used only when the config opts in (``fallback: "conservative"``).

They are safe moves that fit any moment — ask to go on, ask what the character meant (quoting
the anchor's last clause, so they still refer to this conversation), pause — in the
conversation's language. The result is flagged ``fallback=True`` so nobody mistakes them for
model output. Each phrasing has a version without name/quote for tight length limits.
"""

from __future__ import annotations

import re

from .text import primary_language

# per language: (with context, without context) pairs; {name} = character, {topic} = anchor quote
PHRASES: dict[str, list[tuple[str, str]]] = {
    "en": [
        ("Go on, {name}, I'm listening.", "Go on, I'm listening."),
        ('What do you mean by "{topic}"?', "What do you mean by that?"),
        ("Let me think about that for a moment.", "Let me think for a moment."),
        ("How do you feel about this, {name}?", "How do you feel about this?"),
    ],
    "zh": [
        ("{name}，你继续说，我在听。", "你继续说，我在听。"),
        ("你说的“{topic}”是什么意思？", "你刚才的意思是？"),
        ("让我先想一想。", "让我先想一想。"),
        ("{name}，你现在是什么感受？", "你现在是什么感受？"),
    ],
    "ja": [
        ("{name}、続けて。ちゃんと聞いてるよ。", "続けて、聞いてるよ。"),
        ("「{topic}」って、どういう意味？", "それってどういう意味？"),
        ("ちょっと考えさせて。", "ちょっと考えさせて。"),
        ("{name}は今どんな気持ち？", "今どんな気持ち？"),
    ],
    "ko": [
        ("{name}, 계속 말해 줘. 듣고 있어.", "계속 말해 줘. 듣고 있어."),
        ("“{topic}”라는 게 무슨 뜻이야?", "그게 무슨 뜻이야?"),
        ("잠깐 생각해 볼게.", "잠깐 생각해 볼게."),
        ("{name}, 지금 기분은 어때?", "지금 기분은 어때?"),
    ],
}
_CLAUSES = re.compile(r"[.!?;。！？；…\n]+")
_QUOTES = "\"'“”‘’「」『』*()（）"


def topic_of(anchor_text: str) -> str:
    """The anchor's last meaningful clause (usually the question the user must answer)."""
    clauses = [c.strip().strip(_QUOTES).strip() for c in _CLAUSES.split(anchor_text)]
    clauses = [c for c in clauses if len(c) >= 2]
    return clauses[-1] if clauses else ""


def _shorten(text: str, budget: int) -> str:
    if len(text) <= budget:
        return text
    cut = text[:budget]
    if " " in cut and not any(ord(c) > 0x2E80 for c in cut):
        cut = cut.rsplit(" ", 1)[0]
    return (cut.rstrip(" ,，、") + "…") if budget > 4 else ""


def conservative_options(
    language: str, *, count: int, max_chars: int, character_name: str, anchor_text: str
) -> list[str]:
    phrases = PHRASES.get(primary_language(language), PHRASES["en"])
    topic = topic_of(anchor_text)
    out: list[str] = []
    for rich, plain in phrases[:count]:
        text = plain
        if "{topic}" in rich and topic:
            room = max_chars - len(rich.replace("{topic}", "")) - 1
            quoted = _shorten(topic, min(room, 24))
            if len(quoted) >= 2:
                text = rich.replace("{topic}", quoted)
        elif "{name}" in rich and character_name.strip():
            candidate = rich.replace("{name}", character_name.strip())
            text = candidate if len(candidate) <= max_chars else plain
        elif "{" not in rich and len(rich) <= max_chars:
            text = rich
        out.append(text)  # plain phrasings fit the smallest allowed limit (32)
    return out
