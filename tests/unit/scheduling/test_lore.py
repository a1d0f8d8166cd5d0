"""Lore selection (issue 28): which entries join a speaking member's prompt, in what order, within
what budget."""

from __future__ import annotations

from scheduling.lore import LoreEntry, estimate_tokens, select_lore


def entry(id: str, *keys: str, content: str = "x", **kw) -> LoreEntry:  # noqa: A002
    return LoreEntry(id=id, keys=keys, content=content, **kw)


def ids(used) -> list[str]:
    return [u.entry.id for u in used]


def test_entries_whose_key_is_in_the_window_are_used_highest_priority_first_ties_by_id() -> None:
    entries = [entry("b", "castle", priority=1), entry("c", "dragon", priority=5), entry("a", "castle", priority=1),
               entry("z", "moon", priority=9)]  # fmt: skip
    used = select_lore(entries, ["We rode to the castle.", "A dragon slept there."], "A1", 400)
    assert ids(used) == ["c", "a", "b"]
    assert used[0].keys == ("dragon",)


def test_keys_match_case_insensitively_and_latin_keys_only_as_whole_words() -> None:
    entries = [entry("k", "Kestrel Keep"), entry("cat", "cat")]
    assert ids(select_lore(entries, ["the KESTREL keep walls", "a category"], "A1", 400)) == ["k"]


def test_cjk_keys_match_inside_a_sentence_and_in_traditional_script() -> None:
    entries = [entry("s", "雪城"), entry("t", "龍")]
    assert ids(select_lore(entries, ["我们明天去雪城吧", "那條龙很大"], "A1", 400)) == ["s", "t"]
    assert ids(select_lore(entries, ["那條龍很大"], "A1", 400)) == ["t"]


def test_secondary_keys_are_an_and_filter_one_of_them_must_appear_too() -> None:
    guarded = entry("g", "sword", secondary_keys=("king", "queen"))
    assert select_lore([guarded], ["a sword"], "A1", 400) == []
    used = select_lore([guarded], ["the queen's sword"], "A1", 400)
    assert ids(used) == ["g"] and used[0].keys == ("sword", "queen")


def test_member_filter_and_agent_entries_apply_only_to_their_members() -> None:
    entries = [entry("only-b", "rain", member_ids=("B",)), entry("all", "rain"), entry("a-own", "rain", agent_id="A")]
    assert ids(select_lore(entries, ["rain again"], "A", 400)) == ["a-own", "all"]
    assert ids(select_lore(entries, ["rain again"], "B", 400)) == ["all", "only-b"]
    assert ids(select_lore(entries, ["rain again"], "C", 400)) == ["all"]


def test_disabled_entries_and_absent_keys_are_never_used() -> None:
    entries = [entry("off", "rain", enabled=False), entry("sun", "sun")]
    assert select_lore(entries, ["rain"], "A", 400) == []


def test_the_budget_stops_at_the_first_entry_that_does_not_fit() -> None:
    entries = [entry("big", "k", content="x" * 40, priority=3),  # 10 tokens
               entry("cjk", "k", content="雪城很冷" * 2, priority=2),  # 8 tokens
               entry("small", "k", content="tiny", priority=1)]  # 1 token, but after one that did not fit  # fmt: skip
    assert ids(select_lore(entries, ["k"], "A", 18)) == ["big", "cjk"]
    assert ids(select_lore(entries, ["k"], "A", 17)) == ["big"]
    assert ids(select_lore(entries, ["k"], "A", 9)) == []
    assert select_lore(entries, ["k"], "A", 0) == []  # 0: lore is off


def test_token_estimate_counts_a_cjk_character_as_one_and_four_other_characters_as_one() -> None:
    assert estimate_tokens("雪城") == 2
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("雪城 abc") == 3
