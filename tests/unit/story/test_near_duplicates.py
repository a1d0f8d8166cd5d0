"""The suggestions near-duplicate check: three options that differ by a character are one option."""

from __future__ import annotations

import pytest

from story.auto_reply.text import similarity
from story.auto_reply.validate import NEAR_DUPLICATE, NEAR_DUPLICATE_RATIO, check_options, near_duplicate_problems
from tests.unit.story.near_duplicate_cases import DISTINCT, NEAR


@pytest.mark.parametrize(("a", "b"), NEAR)
def test_labelled_near_duplicates_are_over_the_threshold(a: str, b: str) -> None:
    assert similarity(a, b) >= NEAR_DUPLICATE_RATIO
    assert near_duplicate_problems([a, b]), (a, b)


@pytest.mark.parametrize(("a", "b"), DISTINCT)
def test_labelled_distinct_options_pass(a: str, b: str) -> None:
    assert not near_duplicate_problems([a, b]), (a, b, similarity(a, b))


def test_the_threshold_sits_between_the_labelled_sets() -> None:
    assert max(similarity(a, b) for a, b in DISTINCT) < NEAR_DUPLICATE_RATIO <= min(similarity(a, b) for a, b in NEAR)


def test_names_and_punctuation_do_not_make_options_alike() -> None:
    assert similarity("莉娅，谢谢你！", "莉娅，我想走了。", ignore=["莉娅"]) < NEAR_DUPLICATE_RATIO
    assert similarity("Thanks!!", "thanks") == 1.0


def test_a_negation_keeps_two_options_apart() -> None:
    assert not near_duplicate_problems(["我想去看看。", "我不想去看看。"])
    assert not near_duplicate_problems(["I want to try it.", "I don't want to try it."])


def test_check_options_names_each_near_duplicate_once() -> None:
    checked = check_options(["我也觉得这个视频超好笑！", "我也觉得这个视频好好笑！", "我也觉得这个视频真好笑！"],
                            count=3, max_chars=60, language="zh-CN", speaker_names=["小跳"], anchor_text="哈哈")  # fmt: skip
    near = [p for p in checked.problems if NEAR_DUPLICATE in p]
    assert [p.split(":")[0] for p in near] == ["option 2", "option 3"]
