"""Text a chat assistant writes about itself: what neither a companion nor the user would say.

Small instruction-tuned models fall back to their assistant training under a persona. Two lists,
because the two voices may share some of it:

- ``machine_voice`` (refusals, naming itself an AI, offering service, asking for "more
  information" like a form) is out of character for a companion *and* for the user: Qwen2.5-0.5B saved "很抱歉，我不能回答这个问题。" as a companion's
  reply to "气死我了，室友又把我的东西弄坏了"; SmolLM2 wrote "As an AI, I don't have feelings" and
  saved "…as a group chat AI, I don't have the ability to manage personal finances, and I'm not able
  to provide any financial advice. My role is to help you with your creative writing project…".
- ``helper_voice`` adds the help desk's manners (inviting questions, hoping it helped, asking for
  "more information so I can…"): no user sends those to a companion (Qwen2.5-0.5B offered
  "当然可以，请提供更多的信息和想法，我会根据你的需求…" as the user's next line). A companion's
  closing help-desk sentence is trimmed instead (``app/turns/sign_off.py``), not failed.
"""

from __future__ import annotations

import re

_MACHINE = (
    r"\bI(?:'m| am) (?:sorry|afraid),? but I (?:can(?:no|')t|am unable)|\bI can(?:no|')t (?:assist|help) with"
    r"|\bhow (?:can|may) I (?:help|assist)|\bas an? (?:[\w-]+ ){0,3}?(?:AI|language model|chatbot)\b"
    r"|\bI(?:'m| am) not able to provide (?:any |you with )?(?:\w+ )?advice\b|\bmy (?:role|purpose) (?:here )?is to (?:help|assist) you\b"
    r"|\bwhat (?:can I|do you need|would you like me to) (?:help|assist)(?: you)? with\b"
    r"|\bwhat do you need (?:help|assistance) with\b"
    r"|(?:您|你)需要什么(?:样的)?帮助|(?:帮助|帮)您[^。！？!?，,]{0,6}?解决|为您(?:解决|服务)|给您带来(?:了)?(?:困扰|不便|麻烦)"
    r"|\bI(?:'m| am) (?:just |only )?an? (?:AI|language model|virtual assistant|chatbot)\b"
    r"|作为(?:一个|一名)?[^，。！？,.!?\s]{0,6}?(?:AI|人工智能|语言模型|助手|机器人)|我(?:只)?是(?:一个|一名)?(?:AI|人工智能|语言模型|AI助手|智能助手)"
    r"|我(?:无法|不能|不会)(?:直接)?(?:协助|提供|帮助你完成|回答)|抱歉，我(?:无法|不能)|有什么(?:我)?(?:可以|能)帮(?:到|助)?(?:你|您)"
    r"|请(?:您|你)?提供(?:一下)?[^。！？!?]{0,24}?(?:信息|细节|资料)|\bplease provide (?:me with )?(?:more |some |the )?(?:details|information)\b"
)
_HELP_DESK = (
    # "the assistant" is the help desk talking about itself in a user's line; a companion may be
    # talking about the user's new assistant at work.
    r"\b(?:an?|the) (?:AI|language model|assistant)\b"
    r"|\bI'm (?:here|glad I could) (?:to )?(?:help|assist)|\bif you have any (?:other |more |further )?questions\b"
    r"|\bfeel free to (?:ask|reach out)\b|\bhope (?:this|that|it) helps\b"
    r"|\bplease provide (?:more|some|further) (?:details|information|context)\b|\bI'd be happy to help\b"
    r"|我(?:很乐意|会尽力)帮助(?:你|您)|我会尽(?:力|我所能)(?:去)?(?:给|为|帮)|如果(?:你|您)有任何(?:问题|疑问|需要)|如果(?:你|您)?(?:还)?有(?:任何|其他|其它|什么)?(?:问题|疑问|需要)(?:或(?:者)?需要帮助)?[，,]?\s*(?:请|欢迎|可以|都可以)?(?:随时)?(?:告诉|联系|问|找)"
    r"|请随时(?:告诉|联系|问)我|请随时告知|(?:很|非常)荣幸(?:能够?)?帮(?:到|助)|希望(?:这|我的)(?:些)?(?:建议|回答)?能(?:够)?帮(?:到|助)(?:你|您)"
    r"|对(?:你|您)有所帮助|给(?:你|您)带来(?:的)?不便|(?:还有|有)(?:其他|什么)(?:需要)?(?:帮助|帮忙)的地方|请(?:您|你)?稍后再试"
    r"|请(?:您|你)?提供(?:更多|更详细|一些)(?:的)?(?:信息|细节|背景|内容)|(?:根据|满足)(?:你|您)的(?:需求|要求)"
    r"|当然可以[，,]?\s*(?:请|帮你|帮您|我(?:可以|会|来)帮)|(?:很)?高兴能(?:够)?帮(?:助|到)?(?:你|您)|\bI'?m (?:glad|happy) to help\b"
)
_MACHINE_RE = re.compile(f"(?:{_MACHINE})", re.IGNORECASE)
_HELPER_RE = re.compile(f"(?:{_MACHINE}|{_HELP_DESK})", re.IGNORECASE)


def machine_voice(text: str) -> str | None:
    """The first refusal, AI self-reference or offer of service in ``text``, if any."""
    match = _MACHINE_RE.search(text)
    return match.group(0) if match else None


def helper_voice(text: str) -> str | None:
    """``machine_voice`` or a help desk's manners: the first such phrase, if any."""
    match = _HELPER_RE.search(text)
    return match.group(0) if match else None
