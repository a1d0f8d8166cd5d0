"""A reply whose tone contradicts what the user said: gladness at their distress.

Qwen2.5-0.5B saved "I'm glad you're feeling down today." as the comforter's answer to a sad, an
anxious and an angry line in one benchmark run (a template of cheer filled with the user's
feeling). No friend says that, and no other rule sees it: the words are the reply's own. The
pattern is narrow on purpose: the gladness must be *about* the feeling ("glad you're feeling
down", "很高兴你很难过"); "I'm glad you told me you're feeling down" and "很高兴你愿意告诉我" pass.
"""

from __future__ import annotations

import re

_DISTRESS_EN = (r"(?:down(?!\s+(?:to|for|with)\b)|sad|upset|anxious|angry|stressed(?:\s+out)?|depressed|lonely|hurt|worried|scared|"
                r"frustrated|miserable|awful|terrible|overwhelmed|nervous|heartbroken|hopeless)(?![-\w])")
# Not "bad", "low", "mad", "lost": "glad you're bad at lying", "low-key", "mad about it", "lost in a
# book"; nor "down for" ("glad you're down for the trip": willing).
_GLAD_EN = re.compile(
    r"\b(?:glad|happy|great|good|nice|pleased|delighted|excited|thrilled)\s+(?:to\s+(?:hear|see|know)\s+)?"
    r"(?:that\s+)?you(?:'re|\s+are|\s+feel|\s+felt|'ve\s+been|\s+have\s+been|\s+were)\s+"
    r"(?:(?:feeling|so|really|a\s+(?:bit|little)|very|quite|kind\s+of|pretty|this|today)\s+)*" + _DISTRESS_EN,
    re.IGNORECASE,
)
_DISTRESS_ZH = r"(?:难过|伤心|焦虑|沮丧|生气|愤怒|失落|孤独|痛苦|不开心|心情不好|压力(?:很|好|这么)?大|害怕|委屈|崩溃)"
_GLAD_ZH = re.compile(
    r"(?:高兴|开心|太好了|真好|欣慰)(?:听到|看到|知道)?你(?:今天|现在|最近)?(?:很|有点|有些|感到|觉得|这么|那么|非常|好)*"
    + _DISTRESS_ZH
)


def glad_about_distress(text: str) -> str | None:
    """The first phrase in ``text`` that is glad about the user's bad feeling, if any."""
    for pattern in (_GLAD_EN, _GLAD_ZH):
        if match := pattern.search(text):
            return match.group(0)
    return None
