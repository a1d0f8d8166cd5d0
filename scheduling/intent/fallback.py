"""Offline intent: mentions, "everyone" words, question and advice cues, emotion words.

Order matters: naming an agent beats everything (the seed honours mentions first), then a
question to everyone, then advice, questions, emotional sharing, light chat.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from scheduling.emotion.fallback import fallback_emotion
from scheduling.intent.model import UserIntent
from scheduling.keywords import Cues
from scheduling.mentions import find_mentions
from scheduling.profiles import AgentProfile

ADDRESS_ALL_CUES = Cues(
    "你们|大家|各位|诸位|所有人|每个人|都说说|都来",
    "everyone|everybody|you all|y'?all|all of you|you guys|each of you|what do you all think",
)
MULTIPLE_VOICES_CUES = Cues(
    "分别|各自|多听听|不同(?:的)?(?:看法|意见|角度|观点)|多个角度|几个意见|都怎么看|你们怎么看",
    "different (?:views|opinions|perspectives|takes)|several (?:views|opinions)|multiple (?:views|opinions|perspectives)|"
    "each of you|what do you all think|second opinion",
)
ADVICE_CUES = Cues(
    "怎么办|建议|该不该|要不要|怎么选|帮我想|怎么做|选哪个|值不值得",
    "should i|what should|advice|recommend|suggest\\w*|help me (?:decide|choose|think|figure)|which (?:one|should)|"
    "is it worth|how do i",
)
QUESTION_CUES = Cues(
    "吗|呢|什么|为什么|怎么|哪|谁|几|多少",
    "what|why|how|when|where|who|which|is it|are you|do you|can you|could you",
)
CHIT_CHAT_CUES = Cues("你好|早上好|晚安|在吗|哈哈|嗨|吃了吗", "hi|hello|hey|good morning|good night|lol|haha\\w*|sup")
_QUESTION_MARK = re.compile(r"[?？]")
_SHARE_EMOTIONS = {"sad", "lonely", "anxious", "stressed", "angry", "romantic", "happy"}


def fallback_intent(text: str, agents: Sequence[AgentProfile]) -> UserIntent:
    mentioned = find_mentions(text, agents)
    to_all = ADDRESS_ALL_CUES.hits(text)
    several = MULTIPLE_VOICES_CUES.hits(text)
    wants_many = bool(to_all or several) or len(mentioned) > 1
    if mentioned:
        return UserIntent("address_specific", mentioned, wants_many, f"names {len(mentioned)} agent(s)")
    if to_all:
        return UserIntent("address_all", [], True, "addresses everyone: " + ", ".join(dict.fromkeys(to_all)))
    if ADVICE_CUES.search(text):
        return UserIntent("advice_request", [], wants_many, "asks what to do")
    if several or _QUESTION_MARK.search(text) or QUESTION_CUES.search(text):
        return UserIntent("question", [], wants_many, "asks a question")
    emotion = fallback_emotion(text)
    if emotion.primary_emotion in _SHARE_EMOTIONS or emotion.needs_comfort:
        return UserIntent("emotional_share", [], wants_many, f"shares a feeling ({emotion.primary_emotion})")
    if CHIT_CHAT_CUES.search(text) or emotion.primary_emotion == "playful" or len(text.strip()) <= 20:
        return UserIntent("chit_chat", [], wants_many, "light chat")
    return UserIntent("other", [], wants_many, "no clear cue")
