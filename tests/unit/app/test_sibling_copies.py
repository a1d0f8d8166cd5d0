"""A reply written beside another of the same turn is checked against the one saved meanwhile:
the near-duplicate ratio, and a reply that is all inside the other (Qwen2.5-0.5B saved
"周衡，您能告诉我您的心情如何？" beside a reply that starts with it), and one that says a
sentence of the other again, as the saved re-check's ``repeats_earlier`` counts it."""

from app.turns.quality import repeats_sibling

SAVED = "周衡，您能告诉我您的心情如何？我会尽力帮助您找到解决方案。希望您能从中吸取经验，并尝试新的方法去应对这种挑战。"


def test_a_reply_inside_a_sibling_is_a_duplicate() -> None:
    assert repeats_sibling("周衡，您能告诉我您的心情如何？", [SAVED])


def test_replies_that_share_a_line_but_say_their_own_are_not() -> None:
    assert not repeats_sibling("我在这里，慢慢说。（周衡）", ["我在这里，慢慢说。（莉娅）"])
    assert not repeats_sibling("别急，先深呼吸，我们一起想想面试可能会问什么。", [SAVED])
    assert not repeats_sibling("好的", [SAVED])  # too short to call a copy


def test_a_reply_opening_with_a_siblings_sentence_is_a_duplicate() -> None:
    first = "我建议你在存钱之前先还信用卡。这是因为信用卡是信用记录的一种，即使你忘记了你的信用卡，但你仍然可以继续使用它。"
    second = ("我建议你在存钱之前先还信用卡。这是因为信用卡是一种支付方式，而存款是存款的一种支付方式，它们在使用时可能会产生不同的风险，"
              "因此在存钱之前先还信用卡可以避免潜在的损失。")  # fmt: skip
    assert repeats_sibling(second, [first])  # saved by Qwen2.5-0.5B; the saved re-check counted it
