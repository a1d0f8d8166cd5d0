"""A reply whose tone contradicts what the user said: gladness at their distress, condolences for their joy.

Qwen2.5-0.5B saved "I'm glad you're feeling down today." as the comforter's answer to a sad, an
anxious and an angry line in one benchmark run (a template of cheer filled with the user's
feeling). No friend says that, and no other rule sees it: the words are the reply's own. The
pattern is narrow on purpose: the gladness must be *about* the feeling ("glad you're feeling
down", "很高兴你很难过"); "I'm glad you told me you're feeling down" and "很高兴你愿意告诉我" pass.

The other way round: Qwen2.5-0.5B, Story on, saved "对不起听到消息！" as the joker's whole answer to
"我今天看到一个超好笑的视频，笑死我了". Condolences need something to be sorry about: the check
fires only when the user's line says it is happy or funny (``_JOY_*``) and names no distress or bad
news (``_DISTRESS_*``, ``_BAD_NEWS_*``); "sorry, I missed that" and "抱歉，我刚看到" are no condolences.
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


_BETTER_EN = re.compile(r"\b(?:glad|happy|great|good|nice)\s+(?:to\s+(?:hear|see|know)\s+)?(?:that\s+)?"
                        r"you(?:'re|\s+are)\s+(?:feeling\s+)?(?:(?:so\s+)?much\s+)?better\b", re.IGNORECASE)
_BETTER_ZH = re.compile(r"(?:高兴|开心|太好了|真好)(?:听到|看到|知道)?你(?:现在|已经)?(?:感觉|心情)?好(?:多|些|一点)了")
_RECOVERED = re.compile(r"\bbetter\b|好多了|好些了|好一点了|没事了", re.IGNORECASE)


def glad_about_distress(text: str, user_text: str = "") -> str | None:
    """The first phrase in ``text`` that is glad about the user's bad feeling, if any; or, to a
    line that names a bad feeling or bad news and no recovery, glad that the user feels better
    (Qwen2.5-0.5B saved "I'm glad you're feeling better!" to "My roommate broke my headphones
    again and I'm furious.")."""
    for pattern in (_GLAD_EN, _GLAD_ZH):
        if match := pattern.search(text):
            return match.group(0)
    if user_text and _sad_or_bad_news(user_text) and not _RECOVERED.search(user_text):
        for pattern in (_BETTER_EN, _BETTER_ZH):
            if match := pattern.search(text):
                return match.group(0)
    return None


_SORRY_EN = re.compile(r"\b(?:sorry\s+(?:to\s+hear|you(?:'re|\s+are|\s+feel|\s+had|\s+have|\s+went)|for\s+your|about\s+(?:that|this|your))"
                       r"|my\s+condolences|that(?:'s|\s+is)\s+(?:so\s+|really\s+)?(?:sad|terrible|awful|rough|tough))", re.IGNORECASE)
_SORRY_ZH = re.compile(r"(?:(?:抱歉|对不起|遗憾|难过)(?:地)?听到|听到(?:这个|这)?(?:消息)?(?:我)?(?:很|真)?(?:难过|遗憾|心疼)|节哀|真(?:是)?(?:遗憾|令人难过))")
_JOY_EN = re.compile(r"\b(?:funny|hilarious|lol|lmao|haha\w*|happy|glad|great\s+news|excited|thrilled|awesome|amazing|"
                     r"promoted|won|passed|got\s+the\s+job|best\s+day)\b", re.IGNORECASE)
_JOY_ZH = re.compile(r"(?:好笑|搞笑|笑死|哈哈|开心|高兴|快乐|太棒|好消息|升职|加薪|考过|通过了|中奖|赢了|兴奋|激动)")
_BAD_NEWS_EN = re.compile(r"\b(?:broke|broken|lost|died|dead|sick|ill|fail(?:ed)?|fired|dumped|hurt|crying|cried|bad|worst|"
                          r"not\s+(?:happy|glad|funny))\b", re.IGNORECASE)
_BAD_NEWS_ZH = re.compile(r"(?:坏了|弄坏|丢了|去世|生病|病了|失败|没考过|没通过|被裁|分手|哭|糟糕|倒霉|不开心|不高兴|不好笑)")


def _sad_or_bad_news(user_text: str) -> bool:
    return bool(says_distress(user_text) or _BAD_NEWS_ZH.search(user_text) or _BAD_NEWS_EN.search(user_text))


def sorry_about_joy(text: str, user_text: str) -> str | None:
    """The condolence in ``text`` for a line of the user's that is only happy or funny, if any."""
    if not (_JOY_EN.search(user_text) or _JOY_ZH.search(user_text)):
        return None
    if _sad_or_bad_news(user_text):
        return None
    for pattern in (_SORRY_EN, _SORRY_ZH):
        if match := pattern.search(text):
            return match.group(0)
    return None


_OWN_DISTRESS_ZH = re.compile(r"我(?:今天|现在|最近)?(?:感到|觉得|有点|有些|很|好|真的|特别|非常|可能|会)*" + _DISTRESS_ZH)
_OWN_DISTRESS_EN = re.compile(
    r"\bI(?:'m|\s+am|\s+feel|\s+felt|'ve\s+been|\s+have\s+been)\s+"
    r"(?:(?:so|really|a\s+(?:bit|little)|very|quite|kind\s+of|pretty|feeling|this)\s+)*" + _DISTRESS_EN,
    re.IGNORECASE,
)


def says_distress(text: str) -> bool:
    """Whether ``text`` names a bad feeling (sad, anxious, angry, stressed, …)."""
    return bool(re.search(_DISTRESS_ZH, text) or re.search(_DISTRESS_EN, text, re.IGNORECASE))


# Help sought for oneself ("我会寻找一些帮助和支持，比如找心理咨询师", "I'll look for some help"): what
# the one in distress does, not what a friend answering them says (that one offers it: "我陪你").
_SEEKS_HELP_ZH = re.compile(r"我(?:会|要|想|得|需要|应该|打算)?(?:去)?(?:寻找|寻求|找)(?:一些|一点|些)?"
                            r"(?:帮助|支持|心理咨询|咨询师|心理医生)")
_SEEKS_HELP_EN = re.compile(r"\bI(?:'ll|\s+will|\s+need\s+to|\s+should|\s+want\s+to|\s+am\s+going\s+to)?\s+"
                            r"(?:seek|look\s+for|find|get|ask\s+for)\s+(?:some\s+)?(?:help|support|a\s+therapist|counsel\w*)\b",
                            re.IGNORECASE)


def seeks_help(text: str) -> str | None:
    """The first phrase in which ``text`` looks for help or support for itself, if any."""
    for pattern in (_SEEKS_HELP_ZH, _SEEKS_HELP_EN):
        if match := pattern.search(text):
            return match.group(0)
    return None


def claims_distress(text: str) -> str | None:
    """The first phrase in which ``text`` says a bad feeling is its own ("我感到压力很大", "I'm so sad"), if any."""
    for pattern in (_OWN_DISTRESS_ZH, _OWN_DISTRESS_EN):
        if match := pattern.search(text):
            return match.group(0)
    return None
