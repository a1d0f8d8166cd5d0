"""Keyword cues: text without a Latin letter skips the English patterns (``Cues._patterns``), which
is only sound while every English fragment starts with a letter."""

import gc
import random
import re
import re._constants as sre
import re._parser as sre_parse

import pytest

import scheduling  # noqa: F401  (imports every module that defines cues)
from scheduling.hanzi import fold_traditional
from scheduling.keywords import Cues

ZERO_WIDTH = {sre.AT, sre.ASSERT, sre.ASSERT_NOT}


def _is_letter(code: int) -> bool:
    return chr(code).isascii() and chr(code).isalpha()


def _set_is_letters(items: list) -> bool:
    for op, arg in items:
        if op is sre.LITERAL and _is_letter(arg):
            continue
        if op is sre.RANGE and _is_letter(arg[0]) and _is_letter(arg[1]) and chr(arg[0]).islower() == chr(arg[1]).islower():
            continue
        return False
    return True


def starts_with_letter(seq) -> bool:  # noqa: ANN001
    """Whether every match of the parsed ``seq`` begins with an ASCII letter (matched as the
    pattern's flags say); False when unsure (e.g. a part that can match nothing comes first)."""
    for op, arg in seq:
        if op in ZERO_WIDTH:
            continue
        if op is sre.LITERAL:
            return _is_letter(arg)
        if op is sre.IN:
            return _set_is_letters(arg)
        if op is sre.SUBPATTERN:
            return starts_with_letter(arg[-1])
        if op is sre.BRANCH:
            return all(starts_with_letter(branch) for branch in arg[1])
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            return arg[0] >= 1 and starts_with_letter(arg[2])
        return False
    return False


def all_cues() -> list[Cues]:
    return [o for o in gc.get_objects() if isinstance(o, Cues)]


def unfiltered_hits(cues: Cues, text: str) -> list[str]:
    zh = [m.group(0) for m in cues._zh.finditer(fold_traditional(text))] if cues._zh is not None else []
    return zh + ([m.group(0) for m in cues._en.finditer(text)] if cues._en is not None else [])


def test_the_analyser_tells_letters_from_other_starts() -> None:
    parse = lambda en: sre_parse.parse(en, re.IGNORECASE)  # noqa: E731
    assert starts_with_letter(parse(r"(?<![a-z])(?:sad|(?:don'?t|do not) need)"))
    assert not starts_with_letter(parse(r"sad|:\("))
    assert not starts_with_letter(parse(r"\w+ing"))
    assert not starts_with_letter(parse(r"(?:very )?sad"))


def test_every_english_cue_starts_with_a_letter() -> None:
    cues = [c for c in all_cues() if c._en is not None]
    assert len(cues) >= 10  # the emotion and intent cue sets were found
    for c in cues:
        assert starts_with_letter(sre_parse.parse(c._en.pattern, c._en.flags)), c._en.pattern[:80]


def test_skipping_english_patterns_never_changes_the_hits() -> None:
    rng = random.Random(7)
    alphabet = "我很难过難過开心開心生气生氣担心擔心好累孤单孤單 ，。！？'0123456789_ſKİ" + "sadhappyangrylonelywrk"
    samples = ["我好ſad", "Kind of 難過", "我好難過", "我3sad", "好_sad", "’'sad", "我好 sad", "今天真的很难过。。。", "好累啊123", "sad", "我很sad!"]
    samples += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(3000)]
    for c in all_cues():
        for text in samples:
            assert c.hits(text) == unfiltered_hits(c, text), text
            assert c.search(text) == bool(unfiltered_hits(c, text)), text


@pytest.mark.parametrize("text", ["我好ſad", "我今天好sad"])
def test_a_latin_word_inside_chinese_still_counts(text) -> None:
    assert Cues(zh="难过", en="sad").hits(text) == [text[-3:]]


def test_letters_that_only_fold_to_latin_ones_still_count() -> None:
    # Kelvin sign, dotted capital I, long s: no a-z, yet the case-insensitive cue matches them
    cues = Cues(en="kiss")
    assert cues.hits("好KİſS") == unfiltered_hits(cues, "好KİſS") == ["KİſS"]


def test_an_english_cue_glued_to_a_digit_or_underscore_before_it_is_not_a_word() -> None:
    cues = Cues(en="sad")
    assert cues.hits("我3sad") == cues.hits("好_sad") == [] and cues.hits("我好 sad") == ["sad"]
