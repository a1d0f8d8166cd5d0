"""Script detection and simulated text, so language checks behave as with a real model.

The simulator answers in the script of the request's last user message (Chinese in → Chinese
out). Every text it writes starts with, or is made of, an explicit "simulated" marker in that
language, so its output can never pass for a real model reply.
"""

from __future__ import annotations

import random

LANGUAGES = ("zh", "ja", "ko", "en")

PLACEHOLDER = {
    "zh": "【模拟回复】这是大模型模拟器生成的占位文本，不是真实模型的回复。",
    "ja": "【シミュレーション】これはモデルシミュレーターが生成した仮のテキストで、実際のモデルの返信ではありません。",
    "ko": "[시뮬레이션] 이것은 모델 시뮬레이터가 만든 임시 텍스트이며 실제 모델의 답변이 아닙니다.",
    "en": "[simulated reply] This is placeholder text from the LLM simulator, not a real model reply.",
}

# Prose replies carry a short tag and a varied body: a whole placeholder sentence in every reply
# would make each one repeat the last (the reply checks drop a repeat of the window).
REPLY_TAG = {"zh": "【模拟回复】", "ja": "【シミュレーション】", "ko": "[시뮬레이션]", "en": "[simulated reply]"}

MARKER = {"zh": "模拟", "ja": "シミュ", "ko": "시뮬", "en": "simulated"}

# Word pools for schema strings: CJK pools are characters, English is words joined by spaces.
_POOL = {
    "zh": "模拟文本内容示例测试回复数据朋友今天心情很好我们一起聊天吧",
    "ja": "シミュレーションのテキストです今日はいい天気ですねみんなで話しましょう",
    "ko": "시뮬레이션텍스트입니다오늘은좋은날이에요함께이야기해요",
    "en": ("sample", "text", "reply", "friendly", "today", "chat", "story", "note", "quiet", "bright", "maybe",
           "coffee", "walk", "river", "laugh", "plan", "later", "window", "music", "rain", "garden", "ticket",
           "morning", "sunny", "dinner", "letter", "train", "picnic", "movie", "puzzle", "lantern", "harbor"),
}


def detect_language(text: str) -> str:
    """Kana → Japanese (Japanese also uses Han), Hangul → Korean, Han → Chinese, else English."""
    has_han = False
    for ch in text:
        code = ord(ch)
        if 0x3040 <= code <= 0x30FF:
            return "ja"
        if 0xAC00 <= code <= 0xD7AF or 0x1100 <= code <= 0x11FF:
            return "ko"
        if 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF:
            has_han = True
    return "zh" if has_han else "en"


def simulated_string(rng: random.Random, language: str, min_length: int = 0, max_length: int | None = None) -> str:
    """A string in ``language`` whose length (in characters) lies in [min_length, max_length]."""
    upper = max_length if max_length is not None else max(min_length, 24)
    # English words are long and every string starts with the marker: more room, so the marker is
    # not most of the string (two such strings would read as near-duplicates).
    low, high = (20, 40) if language == "en" else (8, 24)
    target = rng.randint(min(max(min_length, low), upper), min(max(min_length, high), upper)) if upper > 0 else 0
    target = max(target, min_length)
    if target == 0:
        return ""
    pool = _POOL[language]
    if language == "en":
        text = MARKER["en"]
        while len(text) < target:
            text += " " + rng.choice(pool)
    else:
        text = MARKER[language]
        while len(text) < target:
            text += rng.choice(pool)
    text = text[:target]
    if language == "en" and text.endswith(" "):
        text = text[:-1] + "x"
    return text
