from app.llm.port import Usage
from app.llm.usage import add_usage, estimate_tokens, estimate_usage


def test_cjk_characters_count_one_token_each():
    assert estimate_tokens("你好世界") == 4
    assert estimate_tokens("こんにちは") == 5
    assert estimate_tokens("안녕") == 2


def test_other_text_counts_four_characters_per_token():
    assert estimate_tokens("abcdefgh") == 2
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("") == 0


def test_mixed_text_adds_both_rules():
    assert estimate_tokens("你好 abcd") == 2 + 2


def test_estimated_usage_is_flagged():
    usage = estimate_usage(["你好", "abcd"], "ok")
    assert usage == Usage(input_tokens=3, output_tokens=1, estimated=True)


def test_summed_usage_is_estimated_if_any_part_was():
    total = add_usage(Usage(1, 2), Usage(3, 4, estimated=True))
    assert total == Usage(4, 6, estimated=True)
