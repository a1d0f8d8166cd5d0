"""The initializer's world is refused (repaired once, then the initialisation fails) when its text
carries the material's labels or loops; of threads sharing a clue only the first is taken. The Actor is shown the stage and copies it. Each case is one Qwen2.5-0.5B wrote for a
Chinese group."""

from story.coordinator.init_text import first_of_each, labels_in, text_problems, usable
from story.coordinator.initializer import PersonaSource, compose_material
from story.coordinator.recovery import HistoryMessage
from story.coordinator.turn import BeforeActorInput, StoryCoordinator
from tests.unit.story.builders import cfg, ctx
from tests.unit.story.fakes import MemoryReader, ScriptedModel
from tests.unit.story.test_coordinator import INIT, NORMAL, PLAN

DEFINITION = "Headline: 冷静的分析师\nPersonality: 理性、条理清楚，喜欢把问题拆成几步，给出具体建议。\nTone: 直接、务实。"
PERSONA = PersonaSource("周衡", DEFINITION, "")
HISTORY = [HistoryMessage("u1", "user", "我今天有点难过，不知道该怎么办。", name="用户")]


def material() -> str:
    return compose_material(PERSONA, HISTORY, "帮我分析一下这两个工作机会，一个钱多一个离家近。").text


def test_the_labels_in_are_its_headings_the_definitions_and_the_speakers():
    assert {"recent messages", "headline", "personality", "tone", "用户"} <= labels_in(material())


def test_a_summary_that_copies_a_heading_or_the_definition_is_refused():
    for summary in ("最近消息:\nRecent messages:\nRecent messages:", "Headline: 冷静的分析师\nPersonality: 理性"):
        problems = text_problems([("foreground.summary", summary)], material())
        assert "foreground.summary copies the material's label" in problems[0], problems


def test_a_summary_that_loops_is_refused():
    twice = "客观是每个人都能接受的。客观的人会帮助我们找到共识，共同达成目标。客观的人会帮助我们找到共识，共同达成目标。"
    warm = ("林溪的内心世界变得温柔，感受到温暖和温暖。她感到温暖和温暖的倾听者，被她的声音吸引，让她感到温暖和温暖的倾听者，"
            "被她的声音吸引，让她感到温暖和温暖的倾听者，被她的声音吸引，让她被温柔的倾听者")  # fmt: skip
    for loop in (twice, warm):
        (problem,) = text_problems([("foreground.summary", loop)], material())
        assert problem.startswith("foreground.summary loops (the ") and "write it once" in problem, problem


def test_of_threads_sharing_a_clue_or_an_invitation_only_the_first_is_taken():
    clue = "你是否知道，如果我和你一起工作，我们一定会找到共识的。"
    threads = [(clue, "井边见"), ("戴兜帽的人在井边徘徊", "井边见"), (" 你是否知道，如果我和你一起工作，我们一定会找到共识的", "同行"),
               ("远处的尘土越来越近了", "跟商队一起去看看吧")]  # fmt: skip
    seen: set[str] = set()
    assert first_of_each(threads, lambda t: t, seen) == [threads[0], threads[1], threads[3]]  # "井边见" is short
    assert first_of_each([("远处的尘土越来越近了", "好")], lambda t: t, seen) == []  # across lists: seen


def test_a_world_in_its_own_words_passes_with_names_times_and_short_repeats():
    texts = [("foreground.title", "两份工作邀请"), ("foreground.summary", "傍晚，用户拿着两份录用通知来找周衡商量。时间：今晚之前要回复。"),
             ("backgrounds[0].title", "两份工作邀请"), ("main.direction", "理清利弊"), ("sub.direction", "理清利弊"),
             ("undercurrents[0].clue", "好。好。"), ("main.theme", "Recent news: none"),
             ("backgrounds[0].summary", "傍晚，用户拿着两份录用通知来找周衡商量。"),  # a thin world, not a wrong one
             ("seeds[0].clue", "傍晚，用户拿着两份录用通知来找周衡商量。")]  # fmt: skip
    assert text_problems(texts, material()) == []


async def test_the_coordinator_repairs_a_labelled_world_and_starts_on_the_clean_one():
    labelled = dict(INIT, foreground=dict(INIT["foreground"], summary="Recent messages:\n用户: 我今天有点难过"))
    m = ScriptedModel().enqueue("story_init.world", labelled, INIT).enqueue("story.prepare", NORMAL)
    m.enqueue("story.plan_cycle", PLAN)
    res = await StoryCoordinator(cfg(m), MemoryReader()).before_actor(
        BeforeActorInput(ctx(), "zhouheng", PERSONA, None, "u2", "帮我分析一下", 2, HISTORY))
    assert res.outcome == "prepared" and len(m.calls("story_init.world")) == 2
    assert res.candidate.world.foreground.summary == INIT["foreground"]["summary"]
    invalid = [d for d in res.diagnostics if d.code == "invalid_model_output"]
    assert invalid and "copies the material's label" in invalid[0].message, res.diagnostics


async def test_a_world_whose_threads_share_one_clue_starts_with_the_first_of_them():
    one = {"owner": "灰烬公会", "title": "追查", "clue": "你是否知道，如果我和你一起工作，我们一定会找到共识的。", "invitation": "井边见"}
    copied = dict(INIT, undercurrents=[dict(one, id="uc-a"), dict(one, id="uc-b", owner="盐商队")],
                  seeds=[dict(one, id="seed-a", owner="巡逻队")])  # fmt: skip
    m = ScriptedModel().enqueue("story_init.world", copied).enqueue("story.prepare", NORMAL)
    m.enqueue("story.plan_cycle", PLAN)
    res = await StoryCoordinator(cfg(m), MemoryReader()).before_actor(
        BeforeActorInput(ctx(), "zhouheng", PERSONA, None, "u2", "帮我分析一下", 2, HISTORY))
    assert res.outcome == "prepared" and len(m.calls("story_init.world")) == 1
    assert [u.owner for u in res.candidate.world.undercurrents] == ["灰烬公会"] and res.candidate.world.seed_pool == []


def test_usable_leaves_out_the_parts_whose_text_copies_a_label_or_loops():
    loop = "客观的人会帮助我们找到共识，共同达成目标。客观的人会帮助我们找到共识，共同达成目标。"
    threads = [("追查", "Headline: 冷静的分析师", "井边见"), ("追查", loop, "井边见"), ("追查", "旧档案馆的标记", "井边见")]
    assert usable(threads, lambda t: t, material()) == [threads[2]]


async def test_a_world_starts_without_the_background_and_thread_it_could_not_take():
    bad_thread = {"id": "uc-x", "owner": "盐商队", "title": "追查", "clue": "Recent messages:\n用户: 我今天有点难过",
                  "invitation": "井边见"}  # fmt: skip
    bad_background = {"id": "bg-x", "title": "Headline: 冷静的分析师", "summary": "Personality: 理性", "kind": "progress",
                      "countdown": 3}  # fmt: skip
    answer = dict(INIT, undercurrents=[bad_thread, *INIT["undercurrents"]], backgrounds=[*INIT["backgrounds"], bad_background])
    m = ScriptedModel().enqueue("story_init.world", answer).enqueue("story.prepare", NORMAL)
    m.enqueue("story.plan_cycle", PLAN)
    res = await StoryCoordinator(cfg(m), MemoryReader()).before_actor(
        BeforeActorInput(ctx(), "zhouheng", PERSONA, None, "u2", "帮我分析一下", 2, HISTORY))
    assert res.outcome == "prepared" and len(m.calls("story_init.world")) == 1  # no repair asked
    world = res.candidate.world
    assert "盐商队" not in [u.owner for u in world.undercurrents] and "Ash Guild" in [u.owner for u in world.undercurrents]
    assert [g.title for g in world.backgrounds] == ["The patrol returns"]
    (note,) = [d for d in res.diagnostics if d.code == "story_init_parts_left_out"]
    assert note.data == {"backgrounds": 1, "undercurrents": 1, "seeds": 0}, note


async def test_a_chinese_chat_is_initialised_with_chinese_instructions_and_material():
    """In English, Qwen2.5-0.5B copied the headings and the persona's labels into its Chinese worlds."""
    import msgspec

    m = ScriptedModel().enqueue("story_init.world", INIT).enqueue("story.prepare", NORMAL)
    m.enqueue("story.plan_cycle", PLAN)
    zh = msgspec.structs.replace(ctx(), language="zh-CN")
    res = await StoryCoordinator(cfg(m), MemoryReader()).before_actor(
        BeforeActorInput(zh, "zhouheng", PERSONA, None, "u2", "帮我分析一下", 2, HISTORY))
    assert res.outcome == "prepared"
    system, source = (msg.content for msg in m.calls("story_init.world")[0].messages[:2])
    assert system.startswith("你要围绕角色周衡") and "不能是周衡" in system and "Answer in JSON" not in system
    assert source.startswith("角色：周衡\n设定：\n") and "最近消息：\n用户：我今天有点难过" in source
    assert source.endswith("本轮输入：帮我分析一下")
    english = ScriptedModel().enqueue("story_init.world", INIT).enqueue("story.prepare", NORMAL)
    english.enqueue("story.plan_cycle", PLAN)
    await StoryCoordinator(cfg(english), MemoryReader()).before_actor(
        BeforeActorInput(ctx(), "zhouheng", PERSONA, None, "u2", "help me", 2, HISTORY))
    assert english.calls("story_init.world")[0].messages[0].content.startswith("You set up an interactive story")
