"""Needs that do not say which need (all three flags equal) are read again from the model's
primary emotion and the message; a reading whose flags differ is kept."""

from scheduling import settle_needs
from scheduling.emotion.needs import SETTLED_NOTE

from scheduling_fixtures import emotion

ALL = dict(needs_comfort=True, needs_advice=True, needs_deescalation=True)


def needs(e):
    return (e.needs_comfort, e.needs_advice, e.needs_deescalation)


def test_all_needs_on_a_sad_reading_become_comfort():
    settled = settle_needs(emotion(primary_emotion="sad", **ALL), "最近总是一个人吃饭，有点孤单。")
    assert needs(settled) == (True, False, False)
    assert settled.reason == f"test [{SETTLED_NOTE}]"


def test_no_needs_on_an_angry_reading_become_comfort_and_deescalation():
    settled = settle_needs(emotion(primary_emotion="angry"), "My roommate broke my headphones again!")
    assert needs(settled) == (True, False, True)


def test_the_message_adds_what_the_emotion_does_not_say():
    """Qwen: neutral, every need, on "help me compare two offers": the message asks for advice."""
    settled = settle_needs(emotion(primary_emotion="neutral", **ALL), "帮我分析一下这两个工作机会，一个钱多一个离家近。")
    assert needs(settled) == (False, True, False)


def test_a_happy_line_with_no_needs_stays_without_needs():
    given = emotion(primary_emotion="happy")
    assert settle_needs(given, "我升职了！太开心了！") is given  # nothing re-read, no note


def test_flags_that_differ_are_the_models_judgement_and_are_kept():
    given = emotion(primary_emotion="sad", needs_comfort=True, needs_advice=True)
    assert settle_needs(given, "我今天有点难过，不知道该怎么办。") is given
