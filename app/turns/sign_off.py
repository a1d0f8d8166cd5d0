"""Help-desk sign-offs, and closing lines said before, trimmed from a reply's end.

Small instruction-tuned models close almost every answer the way a support assistant does:
Qwen2.5-0.5B ended Chinese companion replies with "如果你有任何问题或需要帮助，请随时告诉我。",
SmolLM2 with "Let me know if you have any other questions!". A friend in a group chat does not
talk like that, and the rest of the reply is usually fine, so the closing sentences that are only
such a sign-off are cut (a rule, no model call); a reply that was nothing else becomes empty and
fails the ``empty`` check like any other empty answer.

Only whole trailing sentences are cut, and only when the sentence is the sign-off itself: a reply
that *asks* something ("有什么想和我说的吗？") or offers help in its own words stays. The same goes
for a closing sentence the conversation already had word for word (``REPEAT_MIN_CHARS``), and
a reply wrapped whole in quotes loses them (Qwen2.5-0.5B wrote one member's every line as
“…”).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_ZH = re.compile(
    r"^(?:如果|若|要是|假如)?(?:你|您)?(?:还)?(?:有|需要)(?:任何|其他|其它|什么|更多|进一步(?:的)?)?(?:其他|其它)?"
    r"(?:问题|疑问|需要|需求|帮助|想法)(?:(?:或(?:者)?)?(?:需要)?(?:进一步|更多)?(?:的)?(?:帮助|建议|支持|问题))?(?:的话)?[，,、]?\s*"
    r"(?:请|欢迎|都可以|可以)?(?:随时|尽管|继续)(?:告诉|联系|问|提问|找|向)?(?:我|问)?.*$"
    r"|^(?:请|欢迎)?随时(?:告诉|联系|问|提问|找)我.*$"
    r"|^(?:希望|祝)(?:我的|这些|以上)?(?:回答|建议|信息)(?:能|可以)?(?:对你|对您)?(?:有所|有)?(?:帮助|帮到).*$"
    r"|^作为(?:一个|一名)?(?:AI|人工智能|语言模型|AI助手|智能助手).*$",
    re.IGNORECASE,
)
_EN = re.compile(
    r"^(?:(?:and\s+)?if you (?:have|need|want) (?:any|anything|more|other|further|help|support|assistance)[^.!?]*"
    r"(?:feel free|don't hesitate|do not hesitate|let me know|just ask|reach out|i'm here|i am here)[^.!?]*"
    r"|(?:please\s+)?(?:feel free|don't hesitate|do not hesitate) to (?:ask|reach out|let me know|contact)[^.!?]*"
    r"|let me know if (?:you have|you need|there(?:'s| is)) (?:any|anything)[^.!?]*"
    r"|(?:is there )?anything else (?:that )?i can (?:help|assist|do)[^.!?]*"
    r"|(?:(?:so,?|and,?)\s+)?(?:don't worry,?\s+)?i(?:'m| am) (?:always )?here to (?:help|assist)(?: you)?(?: with anything)?"
    r"|i hope (?:this|that|my answer|these) (?:helps?|answers?|was helpful)[^.!?]*"
    r"|as an ai(?: language model| assistant)?\b[^.!?]*)$",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"[^。！？!?.\n]*(?:[。！？!?.]+[」』”\"')）]*|\n|$)")


def sentences(text: str) -> list[str]:
    """``text`` cut after each sentence end (Chinese and Latin), the ends kept; they join back."""
    return [s for s in _SENTENCE.findall(text) if s]


def is_sign_off(sentence: str) -> bool:
    core = sentence.strip().strip("。！？!?.…~～ \"'”」』)）").strip()
    if not core:
        return False
    return bool(_ZH.match(core) or _EN.match(core))


REPEAT_MIN_CHARS = 8
"""A closing sentence at least this long (its letters and digits) that a message of the window
already has, word for word, is a tic, not a reply: Qwen2.5-0.5B ended nine replies of one member
in a row with '同时，也要注意个人的生活习惯和饮食习惯，以提高生活质量。'. Shorter ones ('抱抱你！',
'That's great!') are what friends say again."""

_QUOTES = {"“": "”", '"': '"', "「": "」", "『": "』"}


def _key(sentence: str) -> str:
    return "".join(ch for ch in sentence.casefold() if ch.isalnum())


def said_before(window: Sequence[str]) -> set[str]:
    """The sentences of ``window`` long enough to count as repeated (their ``_key``)."""
    return {k for message in window for part in sentences(message) if len(k := _key(part)) >= REPEAT_MIN_CHARS}


def unquote(text: str) -> str:
    """A reply wrapped whole in one pair of quotes (“…”) without it: the model quoted its own line."""
    stripped = text.strip()
    close = _QUOTES.get(stripped[:1])
    if close and len(stripped) > 2 and stripped.endswith(close) and close not in stripped[1:-1] and stripped[0] not in stripped[1:-1]:
        return stripped[1:-1].strip()
    return text


def trim_sign_off(text: str, window: Sequence[str] = ()) -> str:
    """``text`` without its trailing sign-off sentences and closing sentences the ``window``
    already said (see the module note and ``REPEAT_MIN_CHARS``); else unchanged."""
    text = unquote(text)
    parts = sentences(text)
    if "".join(parts) != text:  # an odd shape the splitter did not cover: leave it alone
        return text
    seen = said_before(window)
    end, cut = len(parts), False
    # A reply that is nothing but lines said before is left whole, for ``repeats_earlier`` to name.
    while end and (is_sign_off(parts[end - 1]) or not parts[end - 1].strip()
                   or (end > 1 and _key(parts[end - 1]) in seen)):  # fmt: skip
        cut = cut or bool(parts[end - 1].strip())
        end -= 1
    if not cut:
        return text
    return "".join(parts[:end]).rstrip(" ，,、；;")
