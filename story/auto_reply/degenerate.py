"""Degenerate text: a reply that is only punctuation, or that loops on one character or phrase.

A model stuck in a loop (``；；；…`` until the token budget runs out, ``哈`` × 300, the same sentence
again and again) produces text that passes the length and script checks. These measures catch it
without flagging ordinary chat, including very short replies such as ``好的！`` or ``OK.``:

- **no words**: no letter or digit at all (punctuation, symbols or emoji only);
- **one character dominates** the letters and digits;
- **a short unit repeats** (a character, a word, a phrase) over most of the text;
- **a long run of very few distinct characters** anywhere in the text (a loop at the end of an
  otherwise normal reply);
- **one clause three times in a row** (``我感到开心，我感到开心，我感到开心。`` after a normal start,
  too short a share of the text for the unit measure), a longer one three times anywhere, or a
  short word four times in a row (``比如爬山、爬山、爬山、爬山、爬山``);
- **one run of Chinese characters three times** anywhere, across clause boundaries
  (``…感受到温暖和温暖。她感到温暖和温暖的倾听者，…让她感到温暖和温暖…``: three different clauses,
  one loop);
- **one sentence said twice** in the reply (a person does not send the same sentence twice in one
  message; Qwen2.5-0.5B's saved replies did: ``你可以尝试一些简单的爬山技巧，比如…`` twice, ``最后，
  你需要找到一个工作机会…`` twice).

Whitespace is ignored and case is folded, so ``Ha ha ha`` and ``hahaha`` look the same. Every
measure except *no words* needs a minimum amount of text: short replies never loop long enough to
tell repetition from emphasis (``哈哈哈``, ``好的好的``, ``No no no!``).
"""

from __future__ import annotations

import re
from collections import Counter

from story.auto_reply.text import is_han

NO_WORDS = "no_words"
DEGENERATE_REPETITION = "degenerate_repetition"

MIN_REPETITION_CHARS = 20
"""Texts with fewer non-space characters than this are never judged repetitive. Short replies
repeat for emphasis (``哈哈哈哈哈哈``, ``好的好的，没问题！``); a 20-character run of one laugh is
already past what a person types, and a model loop runs to hundreds of characters."""

DOMINANT_CHAR_SHARE = 0.5
"""Flag when one character is at least this share of the letters and digits. In natural text the
most common letter is about 12% of English (``e``) and well under 10% of Chinese (``的``); half
the text being one character is a loop (``哈哈哈…``, ``好好好…``), not prose. Punctuation is not
counted here: hesitant replies legitimately use many ``……`` (the run check covers loops of it)."""

REPEATED_UNIT_COVERAGE = 0.6
"""Flag when, for some unit length *p*, at least this share of the letters and digits equals the
character *p* places later. Text made of *k* copies of one unit scores (k - 1) / k, so three
copies (0.67) are flagged and two (0.5, ``好的好的``) are not; unrelated natural text scores well
under 0.1 at every *p* (two random English letters match ~6% of the time, Chinese characters far
less)."""

MAX_UNIT_CHARS = 64
"""The longest repeating unit looked for (a sentence or two of Chinese, a short English sentence
without spaces); longer units cannot repeat three times within a chat reply's token budget."""

MIN_UNIT_REPEATS = 3
"""A unit must fit at least this many times into the text to count as looping."""

CLAUSE_MIN_LETTERS = 4
"""A clause (text between punctuation) needs this many letters and digits for its repeats to count:
``好的，好的，好的`` and ``No, no, no`` are emphasis, a four-character clause said three times is not."""

CLAUSE_REPEATS = 3
"""Consecutive copies of one clause that make a loop."""

CLAUSE_ANYWHERE_LETTERS = 6
"""A longer clause said ``CLAUSE_REPEATS`` times anywhere in the reply, not only in a row, is a loop
too: SmolLM2-135M saved '…and I'm just going to be so happy, and I'm going to just be happy, and
I'm just going to be so happy…' (the copies a few words apart); Qwen2.5-0.5B '…被她的声音吸引，让她
感到…，被她的声音吸引，…，被她的声音吸引…'. No one writes the same six letters between two commas
three times in one chat message (``please, please, please`` is three in a row: the rule below)."""

CLAUSE_TWICE_LETTERS = 12
"""A clause this long said twice anywhere is a loop as a whole sentence is (``SENTENCE_MIN_LETTERS``):
'让她感到温暖和温暖的倾听者' came back twice between commas in one Qwen2.5-0.5B reply."""

WORD_MIN_LETTERS = 2
WORD_REPEATS = 4
"""A shorter clause (a word: ``爬山``) makes a loop at this many consecutive copies: ``好的，好的，好的``
(three) is emphasis, ``爬山、爬山、爬山、爬山`` is not something a person types."""

HAN_RUN_CHARS = 6
HAN_RUN_REPEATS = 3
"""Six Chinese characters in a row, the same three times in one reply, is a loop even when the
clauses around them differ: Qwen2.5-0.5B's Story replies saved '到温暖和温暖' three times in three
clauses. A list of suggestions repeats its frame ('你可以试试跑步，你可以试试游泳…': five
characters, then the items differ); six identical ones, three times, no one types."""

SENTENCE_MIN_LETTERS = 8
"""A sentence (text up to ``。！？!?`` or a line break) with this many letters and digits, said a
second time anywhere in the reply, is a loop; shorter ones (``真的吗？真的吗？``) may be emphasis."""

RUN_WINDOW_CHARS = 32
"""Length of the window for the low-diversity check (non-space characters, punctuation included)."""

RUN_MAX_DISTINCT = 3
"""Flag when some window of ``RUN_WINDOW_CHARS`` characters uses this many distinct characters or
fewer. Any 32 characters of real text in any language use far more (an English window has ~15–20
distinct letters); ``；；；…``, ``哈哈哈…``, ``hahaha…`` or ``!!!?!!!?…`` use one to three."""


def degenerate_problem(text: str) -> str | None:
    """``code: detail`` when ``text`` is degenerate, else None. ``text`` is assumed non-empty."""
    chars = [c for c in text.casefold() if not c.isspace()]
    words = [c for c in chars if c.isalnum()]
    if chars and not words:
        return f"{NO_WORDS}: only punctuation, symbols or emoji"
    if len(chars) < MIN_REPETITION_CHARS:
        return None
    for detail in (_dominant_char(words), _repeated_unit(chars, len(words)), _low_diversity_run(chars),
                   _repeated_sentence(text), _repeated_clause(chars), _repeated_han_run(chars)):  # fmt: skip
        if detail is not None:
            return f"{DEGENERATE_REPETITION}: {detail}"
    return None


def _dominant_char(words: list[str]) -> str | None:
    if len(words) < MIN_REPETITION_CHARS:
        return None
    char, count = Counter(words).most_common(1)[0]
    share = count / len(words)
    return f"'{char}' is {share:.0%} of the letters" if share >= DOMINANT_CHAR_SHARE else None


def _repeated_unit(chars: list[str], word_count: int) -> str | None:
    if word_count == 0:
        return None
    longest = min(MAX_UNIT_CHARS, len(chars) // MIN_UNIT_REPEATS)
    for p in range(1, longest + 1):
        matches = sum(1 for a, b in zip(chars, chars[p:]) if a == b and a.isalnum())
        coverage = matches / word_count
        if coverage >= REPEATED_UNIT_COVERAGE:
            unit = "".join(chars[-p:])
            return f"a {p}-character unit repeats over {coverage:.0%} of the text ('{unit[:20]}')"
    return None


def _low_diversity_run(chars: list[str]) -> str | None:
    if len(chars) < RUN_WINDOW_CHARS:
        return None
    window = Counter(chars[:RUN_WINDOW_CHARS])
    for i in range(RUN_WINDOW_CHARS, len(chars) + 1):
        if len(window) <= RUN_MAX_DISTINCT:
            shown = "".join(sorted(window))
            return f"{RUN_WINDOW_CHARS} characters in a row use only {len(window)} distinct ('{shown}')"
        if i == len(chars):
            break
        window[chars[i]] += 1
        gone = chars[i - RUN_WINDOW_CHARS]
        window[gone] -= 1
        if not window[gone]:
            del window[gone]
    return None


def _repeated_clause(chars: list[str]) -> str | None:
    clauses: list[str] = []
    current: list[str] = []
    for c in [*chars, "."]:
        if c.isalnum():
            current.append(c)
        elif current:
            clauses.append("".join(current))
            current = []
    counts = Counter(c for c in clauses if len(c) >= CLAUSE_ANYWHERE_LETTERS)
    for clause, n in counts.most_common():
        if n >= CLAUSE_REPEATS or (n >= 2 and len(clause) >= CLAUSE_TWICE_LETTERS):
            return f"the clause '{clause[:20]}' {n} times"
    for i in range(len(clauses)):
        clause = clauses[i]
        for least, repeats in ((CLAUSE_MIN_LETTERS, CLAUSE_REPEATS), (WORD_MIN_LETTERS, WORD_REPEATS)):
            run = clauses[i:i + repeats]
            if len(clause) >= least and len(run) == repeats and all(c == clause for c in run):
                return f"the clause '{clause[:20]}' {repeats} times in a row"
    return None


def _repeated_han_run(chars: list[str]) -> str | None:
    han = "".join(c for c in chars if is_han(c))
    counts = Counter(han[i:i + HAN_RUN_CHARS] for i in range(len(han) - HAN_RUN_CHARS + 1))
    run, n = counts.most_common(1)[0] if counts else ("", 0)
    return f"'{run}' {n} times" if n >= HAN_RUN_REPEATS else None


_SENTENCE_END = re.compile(r"[。！？!?\n]+|(?<=[^\W\d_])[.]+(?=\s|$)")


def _repeated_sentence(text: str) -> str | None:
    seen: set[str] = set()
    for sentence in _SENTENCE_END.split(text.casefold()):
        key = "".join(c for c in sentence if c.isalnum())
        if len(key) >= SENTENCE_MIN_LETTERS:
            if key in seen:
                return f"the sentence '{sentence.strip()[:20]}' said twice"
            seen.add(key)
    return None
