"""A reply written beside another of the same turn is checked against the one saved meanwhile:
the near-duplicate ratio, and a reply that is all inside the other (Qwen2.5-0.5B saved
"周衡，您能告诉我您的心情如何？" beside a reply that starts with it)."""

from app.turns.pipeline import _duplicates

SAVED = "周衡，您能告诉我您的心情如何？我会尽力帮助您找到解决方案。希望您能从中吸取经验，并尝试新的方法去应对这种挑战。"


def test_a_reply_inside_a_sibling_is_a_duplicate() -> None:
    assert _duplicates("周衡，您能告诉我您的心情如何？", [SAVED])


def test_replies_that_share_a_line_but_say_their_own_are_not() -> None:
    assert not _duplicates("我在这里，慢慢说。（周衡）", ["我在这里，慢慢说。（莉娅）"])
    assert not _duplicates("别急，先深呼吸，我们一起想想面试可能会问什么。", [SAVED])
    assert not _duplicates("好的", [SAVED])  # too short to call a copy
