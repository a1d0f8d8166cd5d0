"""Strict validation of model options: every rejection names its problem precisely."""

from __future__ import annotations

import pytest

from story.auto_reply import check_options
from story.auto_reply.text import comparison_key, expected_script, strip_marker


def check(options, *, count=3, max_chars=160, language="en", names=("Guard",), anchor="Where is your pass?"):
    return check_options(options, count=count, max_chars=max_chars, language=language,
                         speaker_names=names, anchor_text=anchor)


def test_three_distinct_valid_options_pass_cleaned():
    result = check(["I search my bag for the pass.", "Where can I get a new one?", "I step aside and wait."])
    assert result.ok
    assert result.options[0] == "I search my bag for the pass."


def test_exact_duplicates_are_rejected_naming_both_options():
    result = check(["I wait.", "Tell me more.", "I wait."])
    assert result.problems == ["option 3: duplicate of option 1 (same words ignoring case, width, spacing and punctuation)"]


def test_near_duplicates_differing_only_in_punctuation_case_and_spacing_are_rejected():
    result = check(["Tell me more!", "tell  me more...", "I leave."])
    assert any(p.startswith("option 2: duplicate of option 1") for p in result.problems)


def test_near_duplicates_differing_only_in_character_width_are_rejected():
    result = check(["我翻找手令。", "我翻找手令！", "ＯＫ，我等一下"], language="zh-CN", anchor="手令呢？")
    assert result.ok is False
    assert result.problems[0].startswith("option 2: duplicate of option 1")
    assert comparison_key("ＯＫ，我等一下") == comparison_key("ok 我等一下")


def test_over_length_option_is_invalid_and_never_truncated():
    long = "I " + "really " * 30 + "want to know."
    result = check(["Fine.", long, "Go on."])
    assert f"option 2: over length ({len(long)} > 160 chars)" in result.problems
    assert result.options[1] == long


def test_chinese_conversation_rejects_english_options():
    result = check(["我翻找随身的手令。", "Where do I get a pass?", "我先退到旁边等候。"], language="zh-CN", anchor="手令呢？")
    assert result.problems == ["option 2: wrong script for language zh-CN (no Chinese (Han) characters)"]


@pytest.mark.parametrize(
    ("language", "good", "bad", "problem"),
    [
        ("ja", "ちょっと待って", "只是等待", "no Japanese kana"),
        ("ko", "잠깐만 기다려 줘", "ちょっと待って", "no Korean Hangul"),
        ("fr", "J'attends ici.", "Жду здесь.", "mostly non-Latin letters"),
    ],
)
def test_script_check_follows_the_conversation_language(language, good, bad, problem):
    result = check([good, bad], count=2, language=language)
    assert len(result.problems) == 1
    assert result.problems[0].startswith(f"option 2: wrong script for language {language} ({problem}")


def test_languages_without_a_script_rule_are_not_script_checked():
    assert expected_script("ru") is None
    assert expected_script("sr-Latn") == "latin"
    assert expected_script("zh-Hant-TW") == "han"
    assert check(["Жду здесь.", "Скажи больше."], count=2, language="ru").ok


@pytest.mark.parametrize("line", ["Guard: Show me the pass.", "guard：出示手令", "“Guard”: halt", "**Guard**: no"])
def test_a_line_spoken_as_the_character_is_rejected(line):
    result = check(["I wait.", "Tell me more.", line], language="und")
    assert any(p.startswith('option 3: written as a line spoken by "Guard"') for p in result.problems)


def test_a_copy_of_the_anchor_is_rejected():
    anchor = "The guard holds out his hand: show me your pass, traveller."
    result = check(["Show me your pass, traveller!", "I wait.", "Why?"], anchor=anchor)
    assert result.problems == ["option 1: copies the character's message"]


@pytest.mark.parametrize(
    ("raw", "clean"),
    [("1. I wait.", "I wait."), ("2) Go on", "Go on"), ("- Sure", "Sure"), ("• 好的", "好的"),
     ("① 我等等", "我等等"), ("（3）那就走吧", "那就走吧"), ("3、走吧", "走吧"), ("1.5 hours?", "1.5 hours?"),
     ("3:00 works", "3:00 works"), ("-1 degrees?", "-1 degrees?")],
)
def test_numbering_and_bullets_are_stripped_before_checks(raw, clean):
    assert strip_marker(raw) == clean


def test_numbered_items_are_checked_and_returned_without_their_numbers():
    result = check(["1. I wait.", "2. Tell me more.", "3. I wait"])
    assert result.options[:2] == ["I wait.", "Tell me more."]
    assert result.problems == ["option 3: duplicate of option 1 (same words ignoring case, width, spacing and punctuation)"]


def test_wrong_count_is_rejected_with_expected_and_actual():
    assert check(["One.", "Two."]).problems == ["expected exactly 3 options, got 2"]
    assert "expected exactly 3 options, got 4" in check(["a1", "b2", "c3", "d4"]).problems


def test_empty_and_symbol_only_options_are_rejected():
    result = check(["  ", "…!?", "Fine."])
    assert "option 1: empty" in result.problems
    assert "option 2: no words (only punctuation or symbols)" in result.problems




@pytest.mark.parametrize(("option", "problem"), [
    ("needsAdvice", "option 2: a field name, not a line ('needsAdvice')"),  # SmolLM2-135M, suggestions
    ("addressed_user_name", "option 2: a field name, not a line ('addressed_user_name')"),  # SmolLM2-135M
    ("Joy (user)", "option 2: only a name, not a line ('Joy (user)')"),  # SmolLM2-135M
    ("Guard", "option 2: only a name, not a line ('Guard')"),
])  # fmt: skip
def test_a_field_name_or_a_bare_speaker_name_is_not_a_line(option: str, problem: str) -> None:
    result = check(["I search my bag.", option, "I step aside and wait."], names=("Guard", "Joy"))
    assert problem in result.problems


@pytest.mark.parametrize("option", ["Okay.", "Joy, wait!", "Joy?", "Guard!", "Guard (quietly): let me pass?", "iPhone 15?", "Sure", "好的（小声）",
                                    "Thanks, Joy (really)."])  # fmt: skip
def test_short_lines_and_lines_with_a_name_are_lines(option: str) -> None:
    result = check(["I search my bag.", option, "I step aside and wait."], names=("Guard", "Joy"))
    assert not [p for p in result.problems if "not a line" in p], result.problems
