"""Settlement evidence is matched after normalisation and must be long enough for its claim."""

from __future__ import annotations

from story.narrative.evidence import MIN_QUOTE_CHARS, normalise, quote_problem, required_chars
from story.narrative.settle import evidence_in

PROSE = "Lia turns the key. \u201cThis is the old archive mark,\u201d the guard says, frowning."
ZH = "守卫看了看徽记，说道：“这是旧档案馆的标记。”然后沉默了。"


def test_normalisation_folds_width_case_whitespace_and_punctuation():
    assert normalise("ＴＨＩＳ  is,\tthe \u201cOld\u201d mark!") == "thisistheoldmark"
    assert normalise("这是：旧档案馆。") == "这是旧档案馆"


def test_a_paraphrase_of_punctuation_and_width_still_matches():
    assert evidence_in(PROSE, '"this is the old archive mark" the guard says', "the guard recognises the mark")
    assert evidence_in(ZH, "这是旧档案馆的标记", "守卫认出徽记")
    assert evidence_in(PROSE, "ＬＩＡ　ＴＵＲＮＳ　ＴＨＥ　ＫＥＹ", "Lia opens it")


def test_a_two_character_quote_never_passes():
    assert not evidence_in(PROSE, "Li", "x")
    assert not evidence_in(ZH, "徽记", "认出")
    assert "too short" in (quote_problem(ZH, "徽记", "认出") or "")


def test_the_required_length_grows_with_the_goal_and_is_bounded():
    assert required_chars("") == MIN_QUOTE_CHARS
    short, long_ = required_chars("find the key"), required_chars("convince the archive guard to recognise the mark " * 3)
    assert MIN_QUOTE_CHARS <= short < long_ <= 24
    assert not evidence_in(PROSE, "Lia turns", "convince the archive guard to recognise the old mark of the house")


def test_a_quote_that_is_not_in_the_prose_fails_whatever_its_length():
    assert quote_problem(PROSE, "The guard opens the archive door for Lia", "enter") == "quote not found in the accepted prose"
