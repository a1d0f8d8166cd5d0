"""Traditional characters folded to simplified ones for matching (``scheduling.hanzi``)."""

import pytest

from scheduling.emotion import fallback_emotion
from scheduling.hanzi import _table, fold_traditional
from scheduling.intent.fallback import fallback_intent
from scheduling.profiles import AgentCapabilities, AgentProfile

# The same sentence in both scripts, written by hand (traditional as used in Taiwan / Hong Kong).
TWINS = [
    ("你憑什麼這麼對我", "你凭什么这么对我"),
    ("這服務態度太差了，簡直噁心", "这服务态度太差了，简直恶心"),
    ("考試過了，今天真是太棒了", "考试过了，今天真是太棒了"),
    ("他走了以後我每天都很想哭", "他走了以后我每天都很想哭"),
    ("明天就要手術了，我好怕", "明天就要手术了，我好怕"),
    ("最近總擔心會被裁員", "最近总担心会被裁员"),
    ("一個人好孤單，好寂寞", "一个人好孤单，好寂寞"),
    ("項目壓力太大了，撐不住", "项目压力太大了，撑不住"),
    ("今天好難過，想哭", "今天好难过，想哭"),
    ("今天吃了麵條", "今天吃了面条"),
]


@pytest.mark.parametrize(("traditional", "simplified"), TWINS)
def test_a_traditional_sentence_folds_to_its_simplified_twin(traditional, simplified):
    assert fold_traditional(traditional) == simplified
    assert fold_traditional(simplified) == simplified


@pytest.mark.parametrize(
    "text", ["著名作家的新书", "后来皇后笑了", "把桌子擦干净", "我们一起去吃面吧", "哪里都不想去", "I'm so sad 😭 [心]"],
)
def test_simplified_and_other_text_is_left_as_it_is(text):
    assert fold_traditional(text) == text


def test_the_table_maps_one_character_to_another_so_offsets_hold():
    table = _table()
    assert len(table) > 4000
    assert all(k != v for k, v in table.items())
    assert not set(table) & set(table.values())  # folding twice changes nothing more
    text = "".join(map(chr, table))
    assert len(fold_traditional(text)) == len(text)


@pytest.mark.parametrize(("traditional", "simplified"), TWINS)
def test_the_offline_emotion_of_a_traditional_sentence_is_its_twins(traditional, simplified):
    a, b = fallback_emotion(traditional), fallback_emotion(simplified)
    assert (a.primary_emotion, a.needs_comfort, a.needs_deescalation, a.intensity) == (
        b.primary_emotion, b.needs_comfort, b.needs_deescalation, b.intensity)


def test_traditional_advice_phrasing_is_read_by_the_intent_fallback():
    agents = [AgentProfile(id="a", name="Planner", capabilities=AgentCapabilities(analysis=0.9))]
    assert fallback_intent("考砸了怎麼辦", agents).kind == fallback_intent("考砸了怎么办", agents).kind == "advice_request"
    assert fallback_emotion("考砸了怎麼辦").needs_advice


def test_the_table_is_built_from_opencc_dictionaries_by_its_rules(tmp_path):
    from scheduling.hanzi_table import HEADER, build_table

    files = {
        "TSCharacters.txt": "難\t难\n乾\t干 乾\n後\t后\n著\t着\n",  # 著 is simplified too: left out
        "STCharacters.txt": "难\t難\n干\t幹 乾 干\n后\t後 后\n著\t著\n",
        "TWVariantsRev.txt": "裡\t裏\n溫\t温\n",  # 裏 is no table key here: no fold; 温 neither
        "HKVariantsRev.txt": "难\t難\n𡃁\t難\n",  # 难 is simplified: left out; 𡃁 goes through 難
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert build_table(tmp_path) == HEADER + "乾\t干\n後\t后\n難\t难\n𡃁\t难\n"
