"""Code-checkable signs that an option is not the user's own message (the seed's "speak as the
user" rules), beyond a ``Name:`` prefix and a copy of the anchor (see ``validate``):

- **announcing success**: the option declares how the user's action turned out ("I finally
  managed to open it", "我成功说服了她"); the user may attempt, the story decides;
- **narrating another character's reaction** in the third person ("Lia smiles", "她点了点头",
  an action in asterisks about someone else): the user never writes the characters' part;
- **the user in the third person** ("The user is feeling down today…", "用户觉得…"): a
  description of the user, as the prompt words it, not their message;
- **quoting the character's lines**: the option is essentially a quoted stretch of the anchor's
  words (with at most a short attribution around it, ``“手令呢？”守卫问道``), i.e. it re-speaks
  the character instead of answering. Asking about a line ("What do you mean by “…”?") is the
  user's own move and passes.

Everything subtler (tone, whether an offer is too presumptuous) stays in the prompt: a word
list cannot judge it, and a false positive costs a repair round trip. The lists are short on
purpose and cover the languages the product ships (zh, ja, en); each hit names its rule so the
repair turn can say exactly what to change.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .text import comparison_key

_SUCCESS = re.compile(
    r"(?:\b(?:successfully|succeeded|i succeed|i managed to|i finally managed|it worked|i won|i convinced"
    r"|you (?:agree|agreed|accept|accepted|believe me now|let me in)|(?:she|he|they) (?:agrees|agreed|accepts|accepted))\b"
    r"|成功(?:地|了|说服|打开|拿到|让)|顺利地|终于做到|你答应了|你同意了|她答应了|他答应了|她同意了|他同意了"
    r"|成功した|うまくいった|やり遂げた)",
    re.IGNORECASE,
)

_REACTIONS_EN = (r"smiles?|smiled|nods?|nodded|laughs?|laughed|blush(?:es|ed)?|sighs?|sighed|frowns?|frowned"
                 r"|agrees?|agreed|turns? (?:red|away)|looks? at (?:me|you)|hugs? me|hugged me|giggles?|grins?|grinned"
                 r"|falls? silent|is (?:surprised|shocked|moved|happy|angry)")
_REACTIONS_ZH = (r"笑了|微笑|点了点头|点头|脸红|哭了|叹了口气|叹气|愣住|沉默了|答应了|同意了|转过身|看着我|抱住我"
                 r"|皱起眉|皱眉|害羞|惊讶|红了脸")
_REACTIONS_JA = r"笑った|微笑んだ|頷いた|うなずいた|赤くなった|ため息をついた|黙り込んだ"


def _third_person(names: Iterable[str]) -> re.Pattern[str]:
    subjects = [re.escape(n.strip()) for n in names if n and n.strip()]
    zh_subjects = "|".join([*subjects, "她", "他"])
    en_subjects = "|".join([*subjects, "she", "he", "they"])
    return re.compile(
        rf"(?:(?<![A-Za-z])(?:{en_subjects})\s+(?:{_REACTIONS_EN})(?![A-Za-z])"
        rf"|(?:{zh_subjects})(?:也|就|立刻|轻轻地?|忍不住)?(?:{_REACTIONS_ZH})"
        rf"|(?:{zh_subjects})(?:は|が)(?:{_REACTIONS_JA}))",
        re.IGNORECASE,
    )


_ACTION = re.compile(r"[*＊]([^*＊]{2,})[*＊]")  # *an action in asterisks*
_QUOTED = re.compile(r"[\"“「『«]([^\"”」』»]{2,})[\"”」』»]")
MIN_QUOTE_KEY_CHARS = 6  # shorter shared words ("你好", "ok") are not a quotation
MAX_FRAME_KEY_CHARS = 5  # what may surround such a quote ("守卫问道", "she asks") and still be one


_THE_USER = re.compile(
    r"\bthe user(?:'s)? (?:is|was|are|feels?|felt|says?|said|wants?|wanted|has|had|seems?|just|does|did|doesn't"
    r"|didn't|can't|thinks?|needs?|(?:is|was) (?:feeling|trying|asking|looking))\b"
    r"|用户(?:说|觉得|感到|感觉|正在|想|需要|心情|今天)",
    re.IGNORECASE,
)
"""The user named in the third person, as a prompt names them: Qwen2.5-0.5B offered "The user is
feeling down today and they're not sure why. What do you want to know about it?" as something the
user would send. The user's own message says "I"; "the user manual" and "用户的需求" (one's own
company's users) are not this."""


def voice_problems(text: str, names: Iterable[str], anchor_text: str) -> list[str]:
    """Each rule the option breaks, as a short phrase for the repair turn."""
    names = [n for n in names if n and n.strip()]
    out: list[str] = []
    if _SUCCESS.search(text):
        out.append("announces that the user's action succeeded (the user may only try; the story decides)")
    third = _third_person(names)
    if third.search(text) or any(third.search(m.group(1)) for m in _ACTION.finditer(text)):
        out.append("describes how another character reacts, in the third person (write only what the user says or does)")
    if _THE_USER.search(text):
        out.append('talks about "the user" in the third person (write as the user, saying "I")')
    anchor_key = comparison_key(anchor_text)
    for m in _QUOTED.finditer(text):
        key = comparison_key(m.group(1))
        frame = comparison_key(text[: m.start()] + text[m.end():])
        if len(key) >= MIN_QUOTE_KEY_CHARS and key in anchor_key and len(frame) <= MAX_FRAME_KEY_CHARS:
            out.append("quotes the character's own line (answer it instead of repeating it)")
            break
    return out
