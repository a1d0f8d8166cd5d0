from scheduling import AgentProfile, find_mentions

from scheduling_fixtures import TEAM

MIA = AgentProfile(id="mia", name="Mia")
MIALA = AgentProfile(id="miala", name="Miala")
LIYA = AgentProfile(id="liya", name="莉娅")
LIYANA = AgentProfile(id="liyana", name="莉娅娜")


def test_chinese_name_is_found_without_word_boundaries():
    assert find_mentions("莉娅你怎么看", [LIYA]) == ["liya"]


def test_at_mention_is_found():
    assert find_mentions("@小暖 在吗", TEAM) == ["gentle"]
    assert find_mentions("hey @Sam, thoughts?", TEAM) == ["calm"]


def test_english_name_matches_whole_words_case_insensitively():
    assert find_mentions("what do you think, SAM?", TEAM) == ["calm"]
    assert find_mentions("samples of salmon", TEAM) == []


def test_longer_name_wins_over_a_prefix_name():
    assert find_mentions("Miala, help", [MIA, MIALA]) == ["miala"]
    assert find_mentions("莉娅娜你好", [LIYA, LIYANA]) == ["liyana"]


def test_several_mentions_come_back_in_order_of_first_appearance():
    text = "豆豆先说，然后阿哲，最后再问问豆豆和小暖"
    assert find_mentions(text, TEAM) == ["joker", "planner", "gentle"]


def test_aliases_count_as_mentions():
    assert find_mentions("暖暖抱抱我", TEAM) == ["gentle"]


def test_mixed_chinese_and_english_names():
    assert find_mentions("Mia和莉娅你们好", [MIA, LIYA]) == ["mia", "liya"]


def test_no_name_means_no_mentions():
    assert find_mentions("今天天气不错", TEAM) == []


def test_a_chinese_name_is_found_in_either_script():
    ale, hong = AgentProfile(id="ale", name="阿乐"), AgentProfile(id="hong", name="周衡陽")
    assert find_mentions("阿樂你覺得呢", [ale]) == ["ale"]
    assert find_mentions("周衡阳，阿乐，你们说呢", [ale, hong]) == ["hong", "ale"]
    assert find_mentions("莉婭娜你怎麼看", [LIYA, LIYANA]) == ["liyana"]  # the longer name still wins
