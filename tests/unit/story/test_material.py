"""Story material per budget: the current input and the last turns always fit; the persona is cut."""

import pytest

from story.coordinator.initializer import PersonaSource
from story.coordinator.material import FLOOR_MESSAGES, compose_material, fair_caps, turn_material
from story.coordinator.recovery import HistoryMessage
from story.coordinator.turn import BeforeActorInput, StoryCoordinator, finalize_turn
from story.tools.advance_world import AdvanceInput, PovAdvanceWorldTool, WriterOutput
from story.tools.material import ACTION_BUDGET, ACTION_LIMIT, PLAN_BUDGET, PLAN_LIMIT, bound_material
from story.tools.narrative_tools import NarrativePlanCycleTool, PlanInput
from story.tools.prepare_turn import PovPrepareTurnTool, PrepareAction, PrepareInput
from tests.unit.story.builders import cfg, ctx, narrative, world
from tests.unit.story.fakes import MemoryReader, ScriptedModel
from tests.unit.story.test_coordinator import ADV, INIT, NORMAL, PLAN

BUDGETS = [ACTION_BUDGET, PLAN_BUDGET]
INPUT = "I open the copper box and read the letter aloud."
LONG = PersonaSource("Lia", "Lia guards the gate. " * 2500, "You stand at the gate.")  # 52,500 characters
HISTORY = [HistoryMessage(f"m{i}", "user" if i % 2 == 0 else "agent", f"turn {i}: " + "words " * 40, name="")
           for i in range(30)]


def definition_shown(text: str) -> str:
    return text.split("Definition:\n", 1)[1].split("\n\nOpening:\n", 1)[0]


@pytest.mark.parametrize("budget", BUDGETS)
def test_a_long_persona_is_shortened_and_the_input_and_last_turns_stay_whole(budget):
    m = compose_material(LONG, HISTORY, INPUT, budget, "x")
    assert len(m.text) <= budget and m.text.endswith(f"Current input: {INPUT}")
    for msg in HISTORY[-FLOOR_MESSAGES:]:
        assert f"{msg.role}: {msg.content}\n" in m.text + "\n"
    shown = definition_shown(m.text)
    assert shown.endswith("…") and LONG.definition.startswith(shown[:-1])
    assert "Opening:\nYou stand at the gate." in m.text  # the short opening stays whole
    [d] = m.diagnostics
    assert d.code == "material_persona_shortened"
    assert d.data == {"part": "definition", "kept": len(shown) - 1, "of": len(LONG.definition), "budget": budget,
                      "material": "x"}


def test_the_persona_keeps_at_least_a_sixth_of_the_budget_when_the_history_is_long():
    history = [HistoryMessage(f"m{i}", "agent", "x" * 3000) for i in range(18)]
    m = compose_material(LONG, history, INPUT, ACTION_BUDGET, "action")
    assert len(definition_shown(m.text)) >= ACTION_BUDGET // 6 - len("You stand at the gate.")
    assert m.text.endswith(f"Current input: {INPUT}") and len(m.text) <= ACTION_BUDGET


def test_the_last_turns_that_do_not_fit_are_each_trimmed_to_a_fair_share_and_said_so():
    history = [HistoryMessage("m0", "user", "short question"), *(HistoryMessage(f"m{i}", "agent", "y" * 3000)
                                                                  for i in range(1, 4))]
    m = compose_material(LONG, history, INPUT, ACTION_BUDGET, "action")
    assert "user: short question\n" in m.text and len(m.text) <= ACTION_BUDGET
    kept = [line for line in m.text.splitlines() if line.startswith("agent: ")]
    assert len(kept) == 3 and len({len(k) for k in kept}) == 1 and kept[0].endswith("…")
    assert {d.code for d in m.diagnostics} == {"material_recent_trimmed", "material_persona_shortened"}


def test_chinese_text_counts_per_character():
    persona = PersonaSource("莉亚", "莉亚守着城门，登记每一位来客。" * 4000)
    m = compose_material(persona, [HistoryMessage("m1", "user", "你好，我想进城。")], "我把钥匙交给莉亚。", PLAN_BUDGET, "plan")
    assert len(m.text) <= PLAN_BUDGET and len(m.text) > PLAN_BUDGET - 50
    assert m.text.endswith("Current input: 我把钥匙交给莉亚。") and "user: 你好，我想进城。" in m.text
    assert m.diagnostics[0].data["of"] == len(persona.definition)


@pytest.mark.parametrize("budget", [*BUDGETS, None])
def test_a_short_persona_and_history_are_not_cut_and_give_no_diagnostic(budget):
    persona = PersonaSource("Lia", "Lia guards the gate.", "You stand at the gate.")
    history = HISTORY[-6:]
    m = compose_material(persona, history, INPUT, budget)
    lines = "\n".join(f"{h.role}: {h.content}" for h in history)
    assert m.diagnostics == [] and m.text == (
        f"Character: Lia\nDefinition:\nLia guards the gate.\n\nOpening:\nYou stand at the gate.\n\n"
        f"Recent messages:\n{lines}\n\nCurrent input: {INPUT}")


def test_without_a_budget_the_caps_per_part_hold_and_the_cut_is_said():
    m = compose_material(LONG, HISTORY, INPUT)
    assert len(definition_shown(m.text)) == 12_000 and m.text.count("\nuser: ") + m.text.count("\nagent: ") == 18
    assert m.diagnostics[0].data == {"part": "definition", "kept": 12_000, "of": len(LONG.definition), "budget": None,
                                     "material": "init"}


def test_an_input_longer_than_the_budget_stays_whole():
    text = "z" * (ACTION_BUDGET + 100)
    m = compose_material(LONG, HISTORY, text, ACTION_BUDGET, "action")
    assert m.text.endswith(f"Current input: {text}")
    assert all(f"turn {i}:" in m.text for i in range(30 - FLOOR_MESSAGES, 30))


def test_fair_caps_keep_short_parts_whole_and_cut_long_ones_equally():
    assert fair_caps([10, 500, 900], 410) == [10, 200, 200]
    assert fair_caps([10, 20], 100) == [10, 20] and fair_caps([5, 5], -3) == [0, 0]


def test_the_last_resort_bound_keeps_the_head_and_the_end_and_says_so():
    text = "H" * 1000 + "m" * 50_000 + "Current input: go"
    out, [d] = bound_material(text, ACTION_LIMIT, "pov_prepare_turn")
    assert len(out) == ACTION_LIMIT and out.startswith("H" * 1000) and out.endswith("Current input: go")
    assert d.code == "material_truncated" and d.data["of"] == len(text) and d.data["kept"] + len("\n[…]\n") == ACTION_LIMIT
    assert bound_material("short", ACTION_LIMIT, "t") == ("short", [])


def test_turn_material_records_the_input_materials_diagnostics_once_per_budget():
    m = turn_material(LONG, HISTORY, INPUT)
    assert [d.data["material"] for d in m.diagnostics] == ["action", "plan"]
    assert INPUT in m.action and INPUT in m.plan and INPUT not in m.past_action + m.past_plan
    assert len(m.action) <= ACTION_BUDGET and len(m.plan) <= PLAN_BUDGET
    assert HISTORY[-1].content in m.past_action and HISTORY[-1].content in m.past_plan


# The tools bound what a host hands them from the persona side: the current input is never lost.

HUGE = f"Character: Lia\nDefinition:\n{'d' * 60_000}\n\nRecent messages:\nuser: hi\n\nCurrent input: {INPUT}"


async def test_prepare_prompt_keeps_the_current_input_of_an_oversized_material():
    m = ScriptedModel().enqueue("story.prepare", NORMAL)
    p = await PovPrepareTurnTool(cfg(m)).execute(PrepareInput(ctx(), world(), PrepareAction("free", INPUT), HUGE))
    prompt = m.calls("story.prepare")[0].messages[-1].content
    assert f"Current input: {INPUT}" in prompt and "user: hi" in prompt and len(prompt) < ACTION_LIMIT + 2000
    assert any(d.code == "material_truncated" and d.data["tool"] == "pov_prepare_turn" for d in p.diagnostics)


async def test_advance_prompt_keeps_the_end_of_an_oversized_material():
    m = ScriptedModel().enqueue("story.advance", ADV)
    p = await PovPrepareTurnTool().execute(PrepareInput(ctx(), world(), PrepareAction("free", INPUT)))
    r = await PovAdvanceWorldTool(cfg(m)).execute(AdvanceInput(ctx(), p, WriterOutput("Lia reads it."), HUGE))
    prompt = m.calls("story.advance")[0].messages[-1].content
    assert f"Current input: {INPUT}" in prompt and len(prompt) < ACTION_LIMIT + 3000
    assert r.outcome == "committed" and any(d.code == "material_truncated" for d in r.diagnostics)


async def test_plan_prompt_keeps_the_current_input_of_an_oversized_setting():
    m = ScriptedModel().enqueue("story.plan_cycle", PLAN)
    huge = HUGE.replace("d" * 60_000, "d" * 120_000)
    await NarrativePlanCycleTool(cfg(m)).execute(PlanInput(ctx(), narrative(), huge))
    prompt = m.calls("story.plan_cycle")[0].messages[-1].content
    assert f"Current input: {INPUT}" in prompt and len(prompt) < PLAN_LIMIT + 3000


# Through the coordinator: every Story model call of a turn sees the input, and the cut is said.

async def test_a_turn_with_a_long_persona_shows_every_model_the_input_and_records_the_shortening():
    m, reader = ScriptedModel(), MemoryReader()
    coord = StoryCoordinator(cfg(m), reader)
    m.enqueue("story_init.world", INIT).enqueue("story.prepare", NORMAL).enqueue("story.plan_cycle", PLAN)
    u1 = "I hand Lia the key but stay outside."
    r1 = await coord.before_actor(BeforeActorInput(ctx("t1"), "lia", LONG, None, "u1", u1, 1, HISTORY))
    assert r1.outcome == "prepared"
    for purpose in ("story_init.world", "story.prepare", "story.plan_cycle"):
        prompt = m.calls(purpose)[0].messages[-1].content
        assert f"Current input: {u1}" in prompt and HISTORY[-1].content in prompt, purpose
    assert len(m.calls("story.prepare")[0].messages[-1].content) < ACTION_BUDGET + 1000
    shortened = {d.data["material"]: d.data for d in r1.diagnostics if d.code == "material_persona_shortened"}
    assert set(shortened) == {"action", "plan", "init"} and shortened["plan"]["kept"] > shortened["action"]["kept"]
    assert shortened["action"]["of"] == len(LONG.definition) and shortened["action"]["budget"] == ACTION_BUDGET

    reader.put("a1", "Lia takes the key and studies the mark.")
    f1 = finalize_turn(r1, "a1", "u1", u1)
    h2 = [*HISTORY, HistoryMessage("u1", "user", u1), HistoryMessage("a1", "agent", "Lia takes the key.", "lia")]
    m.enqueue("story.advance", ADV).enqueue("story.prepare", NORMAL)
    u2 = "Then I ask her what the mark means."
    r2 = await coord.before_actor(BeforeActorInput(ctx("t2"), "lia", LONG, f1.payload, "u2", u2, 3, h2))
    assert r2.outcome == "prepared"
    adv = m.calls("story.advance")[0].messages[-1].content
    assert f"user: {u1}" in adv and "Lia takes the key and studies the mark." in adv and u2 not in adv
    assert f"Current input: {u2}" in m.calls("story.prepare")[1].messages[-1].content
    assert [d.data["material"] for d in r2.diagnostics if d.code == "material_persona_shortened"] == ["action", "plan"]


def test_a_chinese_chat_gets_the_material_in_chinese_labels_and_the_user_as_用户():
    """Qwen2.5-0.5B copied the English headings ("Recent messages:") into a Chinese world."""
    persona = PersonaSource("莉亚", "简介：城门守卫", "你们站在城门口。")
    history = [HistoryMessage("m1", "user", "你好，我想进城。", name="User"),
               HistoryMessage("m2", "agent", "先登记一下。", agent_id="a1", name="莉亚")]  # fmt: skip
    m = compose_material(persona, history, "我把钥匙交给莉亚。", PLAN_BUDGET, "plan", language="zh-CN")
    assert m.text == ("角色：莉亚\n设定：\n简介：城门守卫\n\n开场：\n你们站在城门口。\n\n"
                      "最近消息：\n用户：你好，我想进城。\n莉亚：先登记一下。\n\n本轮输入：我把钥匙交给莉亚。")
    assert not any(w in m.text for w in ("Character", "Recent messages", "Current input", "User"))
    assert compose_material(persona, history, "hi", language="en").text.startswith("Character: 莉亚\nDefinition:\n")
    both = turn_material(persona, history, "我把钥匙交给莉亚。", "zh-CN")
    assert both.action.endswith("本轮输入：我把钥匙交给莉亚。") and "最近消息：" in both.past_plan
