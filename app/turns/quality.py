"""Deterministic quality checks on a reply before it is saved.

A reply fails when it is empty, degenerate (punctuation only, or looping on a character or phrase:
see ``degenerate``), over the length limit, a duplicate or near-duplicate of another reply this
turn, in the wrong script for the conversation language, or is text no user would keep from a
companion (measured with ``overlap``, thresholds from the labelled pairs in
``tests/unit/app/overlap_cases.py``):

- ``echoes_user``: the user's message said back (most of it inside the reply, or the reply mostly
  made of it);
- ``repeats_earlier``: a message already in the window said again;
- ``prompt_leak``: a run of the prompt's own wording (rules, retry notes, persona labels) or of
  the persona definition;
- ``speaks_as_other``: a ``Name:`` speaker label of the user or another member anywhere in the
  text, or the agent's own label after the start (a transcript, not a reply);
- ``speaks_as_user``: a first-person stretch of the user's message said as the companion's own
  ("我非常高兴我升职了！" to "我升职了，太开心了！"): the user's event or feeling taken over;
- ``addresses_members``: a reply to the user that opens by calling two or more members by name
  ("Lia, Joy, Ning, I hope you're feeling better today."): it speaks to the group, not the user
  (not checked on a cross reply, which answers a member);
- ``narrates_others``: a sentence that opens with other members as its subject ("Lia, Joy, and
  Ning are all happy about their promotion.", "Lia and Joy should start saving." — Qwen2.5-0.5B,
  as one member, about the others): a report on the group, not a reply to the user;
- ``reads_as_list``: ``LIST_ITEMS`` or more numbered or bulleted lines in a long reply
  (``LIST_MIN_TOKENS``): an advice sheet, not a
  friend's message in a group chat (Qwen2.5-0.5B answered as the joker and the planner alike with
  four-point lists of tips);
- ``assistant_voice``: a refusal, the model naming itself an AI, or an offer of service
  (``story.auto_reply.helpdesk.machine_voice``): out of character for any companion;
- ``glad_about_distress``: gladness at the user's bad feeling ("I'm glad you're feeling down
  today.", ``app.turns.tone``);
- ``sorry_about_joy``: condolences for a line that is only happy or funny ("对不起听到消息！" to a
  funny video, ``app.turns.tone``).

The agent's own ``Name:`` prefix at the very start is stripped, not failed.

When every reply of a turn is dropped, the turn fails with ``AllRepliesDropped``
(``all_replies_dropped``), whose details name the problem codes per agent.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from typing import Any

from app.errors import AppError
from app.turns.overlap import covered, longest_run, tokens
from app.turns.tone import claims_distress, glad_about_distress, says_distress, seeks_help, sorry_about_joy
from story.auto_reply.degenerate import degenerate_problem
from story.auto_reply.helpdesk import machine_voice
from story.auto_reply.text import comparison_key, expected_script, script_problem

NEAR_DUPLICATE_RATIO = 0.9
WRONG_SCRIPT = "wrong_script"
USER_LABELS = ("user", "用户", "用戶", "ユーザー", "사용자")

COPY_SHARE = 0.8
"""A reply copies a message when ``covered`` is at least this, either way round. On the labelled
pairs, copies score 0.86–1.0 and replies that pick up some of the words (``室友又把你的东西弄坏了？``,
``Promoted at work today?``) at most 0.67."""

COPY_MIN_TOKENS = 5
"""Texts shorter than this (greetings: ``早上好``, ``hi``, ``我升职了``) are never called copies:
answering a greeting in kind is not an echo."""

REPLY_RUN = 2
"""Shortest shared run counted on the reply's side of ``copies`` (two characters: one Chinese word)."""

PROMPT_RUN = 6
"""A reply sharing this many tokens in a row with the prompt's scaffolding (six Chinese characters,
six English words) quotes it: the rules are written so no natural reply needs such a run."""

WINDOW_RUN = 12
"""A reply sharing this many tokens in a row with an earlier message of the window (twelve Chinese
characters, twelve English words) says it again, however much of its own it adds: Qwen2.5-0.5B's
companion ended four turns' replies with '…找到一个适合自己的工作机会来生活…'."""

STAGE_RUN = 12
"""The same for the stage material of a turn (a Story stage's rules, event, clues and directions),
as long as for the window: a reply may show a clue in its words ("旧档案馆的标记"), but Qwen2.5-0.5B
saved one whole, "你是否知道，如果我和你一起工作，我们一定会找到共识的。", to another member."""

PERSONA_RUN = 10
"""The same for the persona definition; longer, since a companion may use its own catchphrases."""

PERSONA_SHARE = 0.75
"""A reply whose tokens are this much persona definition (in runs of three or more) recites it,
however short the runs: Qwen2.5-0.5B answered "Caring, warm, meets feelings first, then offers a
little support." (0.9; its persona: "Caring and warm; meets feelings first, then offers a little
support."), eight words in a row, under ``PERSONA_RUN``. A reply acting on the persona in its own
words ("我会先接住你的情绪，再给你一点支持。") scored 0.69."""

PERSONA_HALF = (6, 0.5)
"""A reply that is half persona definition with one run of six tokens or more recites it too:
Qwen2.5-0.5B saved, as the planner, "Lia, Joy, Ning, I feel calm, structured, and breaks problems
into steps and gives concrete advice." (eight words in a row, 0.5). The reply acting on it above
has no run over four."""


_SAID = r"(?:\s+(?:says|said|asks|asked|replies|replied)|\s*(?:说道?|问道?))"
"""A speech verb between a name and its colon ("Heng says:", "周衡说："): a label only at a line's
start, where Qwen2.5-0.5B wrote "Joy says: …\nHeng says: …" as Joy; after a comma it is a quote."""


def _label_pattern(names: Iterable[str], *, anywhere: bool = False, said: bool = False) -> re.Pattern[str] | None:
    names = [n for n in names if n.strip()]
    if not names:
        return None
    # At a line start, or anywhere after a space or punctuation ("…周衡: 你好"); not inside a word.
    start = r"(?:^|(?<=[^\w@*【\[]))" if anywhere else r"^"
    verb = _SAID if said else ""
    return re.compile(start + r"\s*[@*【\[]?\s*(" + _alternation(names) + r")\s*[】\]*]?" + verb + r"\s*[:：]",
                      re.IGNORECASE | re.MULTILINE)  # fmt: skip


def strip_own_label(text: str, own_names: Sequence[str]) -> str:
    for pattern in (_label_pattern(own_names), _label_pattern(own_names, said=True)):
        if pattern is not None and (match := pattern.match(text)):
            return text[match.end():].strip()
    return text.strip()


def reply_problems(
    text: str,
    *,
    language: str,
    max_chars: int,
    other_names: Sequence[str],
    earlier_replies: Sequence[str],
    own_names: Sequence[str] = (),
    user_text: str = "",
    window: Sequence[str] = (),
    scaffolding: Sequence[str] = (),
    persona: str = "",
    stage: Sequence[str] = (),
    to_user: bool = True,
) -> list[str]:
    """Every problem, each as ``code: detail`` (the code is what analytics groups by).

    ``user_text`` is the message answered, ``window`` the messages before it, ``scaffolding`` the
    prompt's own fixed wording, ``persona`` the persona definition it was given; ``to_user`` False
    for a cross reply, which answers another member (and may call members by name)."""
    problems: list[str] = []
    if not text.strip():
        return ["empty: the reply is empty"]
    if (degenerate := degenerate_problem(text)) is not None:
        problems.append(degenerate)
    if len(text) > max_chars:
        problems.append(f"too_long: {len(text)} > {max_chars} characters")
    if (sibling := sibling_problem(text, earlier_replies)) is not None:
        problems.append(sibling)
    if (wrong := script_problem(text, expected_script(language))) is not None:
        problems.append(f"{WRONG_SCRIPT}: {wrong}")
    problems += copy_problems(text, user_text=user_text, window=window, scaffolding=scaffolding, persona=persona,
                              stage=stage)  # fmt: skip
    if not any(problem_code(p) == "prompt_leak" for p in problems) and (meta := about_the_reply(text)) is not None:
        problems.append(f"prompt_leak: talks about the reply itself ('{meta}')")
    if (label := speaker_label(text, other_names, own_names)) is not None:
        problems.append(f"speaks_as_other: a line is labelled '{label}:'")
    if (name := own_vocative(text, own_names)) is not None:
        problems.append(f"addresses_itself: opens by calling '{name}', its own name")
    if to_user and (called := members_called(text, other_names, own_names)) is not None:
        problems.append(f"addresses_members: opens by calling '{called}', other members, not the user")
    itself = in_first_person(text, own_names, language) if user_text else text
    if user_text and (taken := users_own_words(itself, user_text)):
        problems.append(f"speaks_as_user: says the user's '{taken}' as its own")
    elif user_text and (claimed := takes_the_users_feeling(itself, user_text)):
        problems.append(f"speaks_as_user: takes the user's bad feeling as its own ('{claimed}')")
    if (subject := narrated_members(text, other_names, own_names)) is not None:
        problems.append(f"narrates_others: '{subject}' as the subject of a sentence")
    if (items := len(_LIST_ITEM.findall(text))) >= LIST_ITEMS and len(tokens(text)) >= LIST_MIN_TOKENS:
        problems.append(f"reads_as_list: {items} numbered or bulleted lines")
    if (phrase := machine_voice(text)) is not None:
        problems.append(f"assistant_voice: '{phrase}' is an assistant's line, not a companion's")
    if (glad := glad_about_distress(text, user_text)) is not None:
        problems.append(f"glad_about_distress: '{glad}' is glad about the user's bad feeling")
    if user_text and (sorry := sorry_about_joy(text, user_text)) is not None:
        problems.append(f"sorry_about_joy: '{sorry}' condoles a line that is happy")
    return problems


_ABOUT_THE_REPLY = re.compile(
    r"原话|这(?:个|条|句)回复|这个说法用|用[“\"'「]你[”\"'」]|以下是[^。！？\n]{0,12}[：:]"
    r"|你的角色(?:继续|将会?|会继续|正在|正|逐渐|开始|朝着?|向着?)"
    r"|\byour character (?:continues|will|keeps|is (?:now )?(?:growing|developing|moving|becoming|heading))\b"
    r"|\b(?:this|my) (?:reply|response|draft)\b|\bthe user's (?:words|message|line)\b|\brepeating the user\b"
    r"|\bthe user (?:is|was|does|did|doesn't|didn't|has|had|hands|wants|just|said|says|feels|seems|enters|goes)\b"
    r"|\bhere (?:is|are) (?:the|a|my) [^.!?\n]{0,30}:"
    r"|\bthis is (?:a|one) (?:short |brief |casual |simple )*(?:sentence|response|reply)\b"
    r"|\b(?:follows?|following|according to) the (?:given|above|provided) (?:guidelines|instructions|rules)\b",
    re.IGNORECASE,
)
"""Words a companion's chat line has no use for, but a model discussing the retry's correction
does: Qwen2.5-0.5B (Story on) saved '…\n\n这个说法用“你”，在没有重复原话的情况下表达自己的情绪…' after
being told to answer as '你' and not repeat the user, and '好的，以下是通顺的句子：…' after being told
to write plain sentences (a model presenting its output, not a friend talking). A companion never
calls the person it talks to "the user": SmolLM2 (Story on) wrote "The user does not enter the city
yet." from the stage's wording. Qwen2.5-0.5B (Story on) saved the scene's direction said back about
"your character": "…你的角色继续朝着幽默和爱开玩笑的方向发展。" (a game's "你的角色练到几级了" passes).
Qwen2.5-0.5B closed an English reply with "---\n\nThis is one short
sentence in casual, direct style that follows the given guidelines for creating…"."""


def about_the_reply(text: str) -> str | None:
    """The first phrase in which the reply talks about itself, its draft or the user's words, if any."""
    match = _ABOUT_THE_REPLY.search(text)
    return match.group(0) if match else None


_NARRATING_VERBS = (r"(?:is|are|was|were|should|shall|can|could|will|would|has|have|had|feels?|felt|thinks?|seems?|"
                    r"looks?|wants?|needs?|knows?|loves?|likes?|gets?|got)")


def narrated_members(text: str, other_names: Sequence[str], own_names: Sequence[str] = ()) -> str | None:
    """The other members named as the subject at the start of a sentence, followed by a verb, if
    any ("Lia is right" and "周衡说得对" excepted). The companion's own name may be one of the
    subjects ("Lia, Heng, Joy, and Ning are planning…", written by Ning); at least one is another's."""
    others, names = _member_names(other_names, own_names)
    for found in (_narrated_en(text, names), _narrated_zh(text, names)):
        if found is not None and any(o.casefold() in found.casefold() for o in others):
            return found
    return None


def _member_names(other_names: Sequence[str], own_names: Sequence[str]) -> tuple[set[str], set[str]]:
    """The other members' names, and those with the companion's own, trimmed."""
    others = {n.strip() for n in other_names if n.strip()}
    return others, others | {n.strip() for n in own_names if n.strip()}


def _alternation(names: Iterable[str]) -> str:
    """One regex group matching any of ``names`` (trimmed), the longest first."""
    return "(?:" + "|".join(sorted({re.escape(n.strip()) for n in names if n.strip()}, key=len, reverse=True)) + ")"


def _narrated_en(text: str, names: set[str]) -> str | None:
    ascii_names = [n for n in names if n.isascii()]
    if not ascii_names:
        return None
    name = _alternation(ascii_names)
    pattern = re.compile(rf"(?:^|(?<=[.!?…\n])\s*)({name}(?:\s*,\s*{name})*(?:,?\s+(?:and|&)\s+{name})?)\s+"
                         rf"(?:also\s+|all\s+|both\s+|just\s+)*{_NARRATING_VERBS}\b(?!\s+(?:right|correct|so right)\b)",
                         re.IGNORECASE)  # fmt: skip
    match = pattern.search(text)
    return match.group(1) if match else None


_NARRATING_ZH = r"(?:觉得|认为|希望|感到|正在|打算|准备|需要|应该|想要)"
_NARRATING_MANY_ZH = r"(?:建议|提议|可以|讨论|商量|决定)"
"""What another member thinks, feels or is doing, said for them. ``_NARRATING_MANY_ZH`` only after
two or more names: Qwen2.5-0.5B wrote "周衡和林溪建议大家一起寻找支持。" as 阿乐, "阿乐和周衡建议大家…先存钱。"
as 沈宁, "林溪和阿乐讨论了如何…" and "阿乐和林溪可以一起分析这两个工作机会…" as 周衡 (Story on),
"林溪和周衡一起讨论了这个视频。" as 沈宁 (Story on, to an angry line about a roommate), "阿乐和林溪在讨论如何帮助
解决这个问题。" as 沈宁 (Story on, the 在 of doing it now), and with 一起
whatever the verb: "周衡和林溪一起分享了一段欢乐且美好的视频。" as 阿乐 to a funny video, "沈宁和林溪一起分析了这两个
工作机会。" as 阿乐 (both saved in a Qwen run); where
relaying one member's advice ("周衡建议你先休息，我也同意") or offer ("周衡可以帮你算算") is how friends talk."""


def _narrated_zh(text: str, names: set[str]) -> str | None:
    han_names = [n for n in names if not n.isascii()]
    if not han_names:
        return None
    name = _alternation(han_names)
    adverbs = r"(?:都|也|一直|还|一起|在|正){0,2}"  # 在 / 正: doing it right now ("阿乐和林溪在讨论…")
    pattern = re.compile(rf"(?:^|(?<=[。！？!?…\n]))\s*(?:(?P<many>{name}(?:[和、与跟及]{name})+){adverbs}(?:{_NARRATING_MANY_ZH}|{_NARRATING_ZH})"
                         rf"|(?P<together>{name}(?:[和、与跟及]{name})+)(?:都|也)?一起"
                         rf"|(?P<one>{name}){adverbs}{_NARRATING_ZH})")  # fmt: skip
    match = pattern.search(text)
    return (match.group("many") or match.group("together") or match.group("one")) if match else None


LIST_ITEMS = 3
LIST_MIN_TOKENS = 60
"""A list is an advice sheet when it is also this long (Chinese characters, English words): three
short points ("1. 钱多多少？2. 通勤多久？3. 你更看重哪个？") are how a planner answers "help me
compare these offers"; Qwen2.5-0.5B's four-point tip sheets ran to 150 and more."""
_LIST_ITEM = re.compile(r"^\s*(?:\d{1,2}\s*[.、:：)）]|[（(]\d{1,2}[)）]|[一二三四五六七八九十][、.]|[-*•·]\s)", re.MULTILINE)


FIRST_PERSON = frozenset({"我", "i", "me", "my", "mine", "myself", "im"})
USERS_OWN_RUN = 4
"""Tokens in a row a reply shares with the user's message, one of them ``我``/``I``/``my``, for the
reply to say the user's words as its own: "我升职了" (Qwen2.5-0.5B: "我非常开心，我非常高兴我升职了！"),
"feeling down today and I don't know why" (SmolLM2). Shorter shared runs are how friends answer
("我也是", "我今天也…"); a run without the first person picks up the user's words ("超好笑的视频？")."""


OWN_CLAUSE_SHARE = 0.5
"""A first-person clause of the reply (at least ``COPY_MIN_TOKENS`` tokens, no "you", no "too")
this much made of the user's words, in runs of two, retells the user's situation as the
companion's: "明天我要参加面试了" to "明天要面试了，我好紧张" (0.56, Qwen2.5-0.5B). Clauses that
address the user ("我知道你明天要面试了") or say "me too" ("我今天也有点难过") are the companion's own."""

OWN_FEELING_RUN = 3
"""A bad feeling claimed in a clause of the reply's own voice, sharing this many tokens in a row with
the user's message, one of them the first person ("我今天"), is the user's, even when the reply then
turns to the user; shorter runs ("我…难过") are how a friend says it is sad to hear."""

_CLAUSE = re.compile(r"[^。！？!?.,，;；:：\n]+")
_SENTENCE = re.compile(r"[^。！？!?\n]+")
SECOND_PERSON = frozenset({"你", "您", "you", "your", "yours", "u"})
ME_TOO = frozenset({"也", "too", "also", "either"})


def users_own_words(text: str, user_text: str) -> str | None:
    """What of ``user_text`` the reply says as its own, if anything. Per clause of the reply that
    neither addresses the user nor says "me too": a run of ``USERS_OWN_RUN`` or more tokens shared
    with the user's message with a first-person token in it, or a first-person clause mostly made
    of the user's words (``OWN_CLAUSE_SHARE``)."""
    user = tokens(user_text)
    if not FIRST_PERSON.intersection(user):
        return None  # the user told nothing of their own
    for clause in _CLAUSE.findall(text):
        words = tokens(clause)
        if not _in_own_voice(words):
            continue
        if len(run := _first_person_run(words, user)) >= USERS_OWN_RUN:
            return _joined(run)
        if _mostly_users(clause, words, user_text):
            return clause.strip()
    # The same share over a whole sentence: Qwen2.5-0.5B (Story on) answered "我今天有点难过，不知道该
    # 怎么办。" with "我今天心情不好，不知道该怎么办。", whose clauses are each under the share.
    for sentence in _SENTENCE.findall(text):
        if _in_own_voice(words := tokens(sentence)) and _mostly_users(sentence, words, user_text):
            return sentence.strip()
    return None


def in_first_person(text: str, own_names: Sequence[str], language: str) -> str:
    """``text`` with the companion's own names as the first person: a companion that speaks of
    itself by name says it of itself. Qwen2.5-0.5B saved, as 周衡 (Story on), "周衡今天感觉很难过，不知道
    该怎么办。" to "我今天有点难过，不知道该怎么办。": the user's feeling taken over, under its name."""
    names = {n.strip() for n in own_names if n.strip()}
    if not names:
        return text
    me = "我" if expected_script(language) == "han" else "I"
    return re.sub(rf"(?<!\w)(?:{_alternation(names)})(?![a-zA-Z])", me, text)


def takes_the_users_feeling(text: str, user_text: str) -> str | None:
    """To a user who says they feel bad, a reply that says a bad feeling is its own and never
    addresses the user nor says "me too": it answers in the user's place. Qwen2.5-0.5B saved, as
    the comforter, "我感到压力很大，但是我会尽量保持冷静。我会找一些时间去放松自己，…看看有什么可以
    帮助我。" to "我今天有点难过，不知道该怎么办。" (no words of the user's: ``users_own_words`` passes it).
    "我也很难过" and "我懂，我有时也压力很大，你呢？" are a friend's. A reply that does turn to the user
    still takes the feeling when it claims it in the user's own words (``OWN_FEELING_RUN``)."""
    if not says_distress(user_text):
        return None
    if not (SECOND_PERSON | ME_TOO).intersection(tokens(text)):
        # Help sought for itself is the distressed one's part too: Qwen2.5-0.5B (Story on) saved "我今天的
        # 情绪是平静的，但是我知道我很难面对。我会寻找一些帮助和支持，比如找心理咨询师…" to that line.
        return claims_distress(text) or seeks_help(text)
    # Turning to the user afterwards does not give the feeling back when it is claimed in the
    # user's own words: Qwen2.5-0.5B (Story on) saved "我今天可能会感到非常难过，但是我会试着…帮助你。"
    # to "我今天有点难过…". "我很难过听到这些，你愿意说说吗？" shares no such run with it.
    user = tokens(user_text)
    for clause in _CLAUSE.findall(text):
        words = tokens(clause)
        if _in_own_voice(words) and (claimed := claims_distress(clause)) and len(_first_person_run(words, user)) >= OWN_FEELING_RUN:
            return claimed
    return None


def _first_person_run(words: Sequence[str], user: Sequence[str]) -> Sequence[str]:
    """The longest run ``words`` share with ``user`` that has a first-person token in it (empty: none)."""
    blocks = difflib.SequenceMatcher(None, words, user, autojunk=False).get_matching_blocks()
    runs = [words[b.a:b.a + b.size] for b in blocks]
    return max((r for r in runs if FIRST_PERSON.intersection(r)), key=len, default=())


def _in_own_voice(words: Sequence[str]) -> bool:
    """First person, neither addressing the user nor saying "me too"."""
    return bool(FIRST_PERSON.intersection(words)) and not (SECOND_PERSON | ME_TOO).intersection(words)


def _mostly_users(span: str, words: Sequence[str], user_text: str) -> bool:
    return len(words) >= COPY_MIN_TOKENS and covered(span, user_text, min_run=REPLY_RUN) >= OWN_CLAUSE_SHARE


def _joined(run: tuple[str, ...]) -> str:
    return ("" if all(len(t) == 1 for t in run) else " ").join(run)


def sibling_problem(text: str, earlier_replies: Sequence[str]) -> str | None:
    """``duplicate`` or ``near_duplicate`` against another reply of this turn, if either."""
    key = comparison_key(text)
    for earlier in earlier_replies:
        other = comparison_key(earlier)
        if key == other:
            return "duplicate: same text as another reply this turn"
        if key and other and difflib.SequenceMatcher(None, key, other).ratio() >= NEAR_DUPLICATE_RATIO:
            return "near_duplicate: almost the same as another reply this turn"
    return None


def repeats_sibling(text: str, earlier: Sequence[str]) -> bool:
    """A reply of this turn that is another reply of it again (``earlier``: those claimed before it)."""
    if sibling_problem(text, earlier) is not None:
        return True
    # Either way round, as ``repeats_earlier`` counts on what was saved: a reply inside one written
    # beside it ("周衡，你有啥问题吗？" beside "周衡，你有啥问题吗？如果需要，可以和我聊聊。", Qwen2.5-0.5B,
    # written concurrently), or one that says the other again and adds a line, is that reply again;
    # so is one that opens with the other's sentence (a run of ``WINDOW_RUN`` tokens: "我建议你在存钱之前
    # 先还信用卡。这是因为信用卡是…" from two members of one turn, Qwen2.5-0.5B).
    return any(repeat_of(text, e) is not None for e in earlier)


def repeat_of(text: str, earlier: str) -> str | None:
    """How ``text`` says ``earlier`` again (``COPY_SHARE`` of it, or a run of ``WINDOW_RUN``
    tokens), if it does: ``repeats_earlier`` against the window, and between a turn's replies."""
    if (share := copies(text, earlier)) >= COPY_SHARE:
        return f"{share:.0%} the same as an earlier message"
    if (run := longest_run(text, earlier)) >= WINDOW_RUN:
        return f"says {run} tokens of an earlier message again"
    return None


def own_vocative(text: str, own_names: Sequence[str]) -> str | None:
    """The companion's own name opening the reply as a vocative ("周衡，我理解你的感受" written by
    周衡; "周衡你好！"), if so: a line written to itself."""
    stripped = text.lstrip()
    for name in sorted((n.strip() for n in own_names if n.strip()), key=len, reverse=True):
        rest = stripped[len(name):] if stripped.casefold().startswith(name.casefold()) else None
        if rest is not None and re.match(r"\s*(?:[，,!！]|你好|您好)", rest):
            return name
    return None


def members_called(text: str, other_names: Sequence[str], own_names: Sequence[str] = ()) -> str | None:
    """Two or more members called by name at the reply's start, at least one of them another's
    ("Lia, Joy, Ning, I hope you're feeling better today.", "林溪、周衡，你们…"), if so: a reply to
    the user that speaks to the other members. Qwen2.5-0.5B opened the planner's answer to a budget
    question so, and saved it; one name ("周衡，你说得对") is how a member turns to another."""
    others, names = _member_names(other_names, own_names)
    if not others:
        return None
    name = _alternation(names)
    joined = rf"(?:\s*[,，、]\s*(?:and\s+|&\s*)?|\s+(?:and|&)\s+|\s*[和与跟]\s*)"
    pattern = re.compile(rf"^\s*(?:(?:hey|hi|hello|dear|嘿|嗨|哈喽)[\s,，]*)?({name}(?:{joined}{name})+)\s*[,，!！:：]",
                         re.IGNORECASE)  # fmt: skip
    match = pattern.match(text)
    if match is None or not any(o.casefold() in match.group(1).casefold() for o in others):
        return None
    return match.group(1)


def speaker_label(text: str, other_names: Sequence[str], own_names: Sequence[str] = ()) -> str | None:
    """The first speaker label of the user or another member anywhere, or of the agent itself after
    the start (the start's own label is stripped before the checks)."""
    for pattern in (_label_pattern([*USER_LABELS, *other_names], anywhere=True),
                    _label_pattern([*USER_LABELS, *other_names], said=True)):  # fmt: skip
        if pattern is not None and (match := pattern.search(text)):
            return match.group(1)
    for own in (_label_pattern(own_names, anywhere=True), _label_pattern(own_names, said=True)):
        if own is not None and (match := own.search(text, 1)):
            return match.group(1)
    return None


def copies(reply: str, other: str) -> float:
    """How much ``reply`` and ``other`` are one text: the larger share either covers of the other,
    counting only a side long enough to be more than a greeting."""
    share = covered(other, reply) if len(tokens(other)) >= COPY_MIN_TOKENS else 0.0
    if len(tokens(reply)) >= COPY_MIN_TOKENS:
        # The reply side counts runs of two: a reply stitched from the message's words with one or
        # two of its own (哈哈，看到超好笑的视频，笑死我了！) says the message back all the same.
        share = max(share, covered(reply, other, min_run=REPLY_RUN))
    return share


def _recites(share: float, run: int) -> bool:
    """``share`` of a reply covered by the persona definition, ``run`` its longest run shared with it."""
    min_run, half = PERSONA_HALF
    return share >= PERSONA_SHARE or (share >= half and run >= min_run)


def copy_problems(text: str, *, user_text: str, window: Sequence[str], scaffolding: Sequence[str],
                  persona: str, stage: Sequence[str] = ()) -> list[str]:  # fmt: skip
    problems = []
    if user_text and (share := copies(text, user_text)) >= COPY_SHARE:
        problems.append(f"echoes_user: {share:.0%} the same as the user's message")
    if (repeat := next((r for e in window if (r := repeat_of(text, e)) is not None), None)) is not None:
        problems.append(f"repeats_earlier: {repeat}")
    persona_run = longest_run(text, persona)
    runs = [(longest_run(text, s), PROMPT_RUN) for s in scaffolding] + [(persona_run, PERSONA_RUN)]
    runs += [(longest_run(text, s), STAGE_RUN) for s in stage]
    if any(run >= limit for run, limit in runs if run):
        problems.append(f"prompt_leak: quotes {max(run for run, _ in runs)} tokens of the prompt's own wording")
    elif persona and len(tokens(text)) >= COPY_MIN_TOKENS and _recites(share := covered(text, persona), persona_run):
        problems.append(f"prompt_leak: {share:.0%} of it recites the persona definition")
    return problems


def all_unusable(replies: Sequence[Any]) -> bool:
    """Every reply written and dropped for its text: another member may answer. Not when a model
    error dropped one (a model that is down would fail a stand-in too, after another timeout), nor
    when a plugin refused one before any call (``attempts`` 0: a Story waiting for recovery must
    fail the request, as the seed's recovery table says)."""
    return all(r.dropped and r.attempts > 0 for r in replies) and not any(
        problem_code(p) == "model_error" for r in replies for p in r.problems)


def problem_code(problem: str) -> str:
    return problem.split(":", 1)[0]


class AllRepliesDropped(AppError):
    """Every reply of a turn was dropped. ``details.agents`` lists, per agent (and reply kind), the
    problem codes that dropped its reply and the full problem texts."""

    code = "all_replies_dropped"

    def __init__(self, dropped: list[tuple[str, str, list[str]]]) -> None:
        agents = [
            {"agentId": agent_id, "replyKind": kind, "problems": [problem_code(p) for p in problems],
             "reasons": problems}
            for agent_id, kind, problems in dropped
        ]  # fmt: skip
        summary = "; ".join(f"{a['agentId']}: {', '.join(a['problems']) or 'unknown'}" for a in agents)
        super().__init__(f"every reply was dropped ({summary})", details={"agents": agents})

    def record(self) -> dict[str, Any]:
        """The turn's ``error`` field: ``{code, message, details}``."""
        return {"code": self.code, "message": self.message, "details": self.details}
