"""``from story import ...`` is the library entry: every name of the seed's public call shape
(story-tools seed, section 2) in Python spelling, working on its own, without the app."""

from __future__ import annotations

import subprocess
import sys

import msgspec
import pytest

import story
from story import (
    POV_WRITER_STAGE_INSTRUCTIONS, Background, DealInput, Foreground, Goal, Line, NarrativeDealBeatTool,
    NarrativeInvalid, NarrativePolicy, PovAdvanceWorldTool, PovPrepareTurnTool, PrepareAction, PrepareInput,
    PreparedMismatch, StoryContext, StoryWorldSnapshot, Undercurrent, WorldInvalid, AdvanceInput, WriterOutput,
    create_story_world_snapshot, init_narrative_snapshot, parse_narrative_snapshot, parse_story_world_snapshot,
    project_story_stage, restore_story_prepared_turn,
)

# The seed's import list, camelCase → snake_case for functions, constants and classes as they are.
SEED_NAMES = [
    "create_story_world_snapshot", "parse_story_world_snapshot", "init_narrative_snapshot", "parse_narrative_snapshot",
    "PovPrepareTurnTool", "PovAdvanceWorldTool", "NarrativePlanCycleTool", "NarrativeDealBeatTool",
    "NarrativeSettleEventTool", "NarrativeRebranchTool", "project_story_stage", "restore_story_prepared_turn",
    "POV_WRITER_STAGE_INSTRUCTIONS", "StoryContext", "StoryModelConfig",
]
HOST_NAMES = [
    "PrepareInput", "PrepareAction", "AdvanceInput", "WriterOutput", "PlanInput", "DealInput", "SettleInput",
    "RebranchInput", "StoryPreparedTurn", "AdvanceResult", "NarrativeResult", "DealResult", "WorldPolicy",
    "NarrativePolicy", "NarrativeToolOptions", "NarrativeDealOptions", "ToolHooks", "Diagnostic", "Usage",
    "StoryError", "InvalidToolInput", "PendingTurnUnresolved", "PreparedMismatch", "WorldInvalid", "NarrativeInvalid",
    "StructuredModel",
]
OLD_NAMES = ["PovPrepareTurn", "PovAdvanceWorld", "NarrativePlanCycle", "NarrativeDealBeat", "NarrativeSettleEvent",
             "NarrativeRebranch", "create_world_snapshot", "parse_world_snapshot", "project_stage", "restore_prepared",
             "WRITER_STAGE_INSTRUCTIONS"]


@pytest.mark.parametrize("name", SEED_NAMES + HOST_NAMES)
def test_every_public_name_is_exported_and_listed(name):
    assert name in story.__all__ and getattr(story, name) is not None


def test_all_lists_each_name_once_and_only_names_that_exist():
    assert len(story.__all__) == len(set(story.__all__))
    assert [n for n in story.__all__ if not hasattr(story, n)] == []


def test_the_entry_has_one_spelling_per_thing():
    assert [n for n in OLD_NAMES if hasattr(story, n)] == []
    import story.tools.narrative_tools as nt
    import story.tools.prepare_turn as pt
    assert not hasattr(nt, "NarrativePlanCycle") and not hasattr(pt, "PovPrepareTurn")  # renamed, no aliases


def test_importing_story_imports_no_app_web_database_or_model_client():
    code = ("import sys, story\n"
            "from story import *\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'app', 'litestar', 'sqlalchemy', 'openai'})\n"
            "print(bad)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def world() -> StoryWorldSnapshot:
    return create_story_world_snapshot(
        Foreground("ev-gate", "At the city gate", participants=["Lia"]),
        backgrounds=[Background("bg-patrol", "The patrol returns", "Boots on the road", "conflict", 1)],
        undercurrents=[Undercurrent("uc-guild", "Ash Guild", "The guild hunts the key", "a hooded watcher",
                                    "A courier asks you to meet at the well")],
        protected_owners=["Lia"],
    )


def test_world_snapshots_are_created_and_parsed_strictly():
    w = world()
    assert parse_story_world_snapshot(msgspec.json.encode(w)) == w
    assert parse_story_world_snapshot(msgspec.to_builtins(w)) == w
    with pytest.raises(WorldInvalid):
        create_story_world_snapshot(Foreground("ev", "x"), undercurrents=[Undercurrent("u", "Lia", "t", "c", "i")],
                                    protected_owners=["Lia"])
    with pytest.raises(msgspec.ValidationError):
        parse_story_world_snapshot(b'{"foreground": 3}')


def test_narrative_snapshots_are_created_and_parsed_strictly():
    n = init_narrative_snapshot(Line("The archive", "find what the key opens"), Line("Trust", "earn Lia's help"))
    assert n.need_plan and parse_narrative_snapshot(msgspec.json.encode(n)) == n
    data = msgspec.to_builtins(n)
    assert parse_narrative_snapshot(data) == n
    data["cycle"]["pending"] = [msgspec.to_builtins(Goal("r", "main", "reward", "the reward"))]
    with pytest.raises(NarrativeInvalid, match="must depend on a setup goal"):
        parse_narrative_snapshot(data)
    with pytest.raises(NarrativeInvalid, match="plan_min_goals 6 > plan_max_goals 4"):
        init_narrative_snapshot(n.main, n.sub, NarrativePolicy(plan_min_goals=6, plan_max_goals=4))
    bad_policy = {**msgspec.to_builtins(n), "policy": {"deal_every_turns": 0}}
    with pytest.raises(NarrativeInvalid, match="deal_every_turns 0 < 1"):
        parse_narrative_snapshot(bad_policy)
    with pytest.raises(msgspec.ValidationError):  # an unknown policy key is refused, not ignored
        parse_narrative_snapshot({**msgspec.to_builtins(n), "policy": {"deal_every_turn": 2}})


async def test_prepare_project_restore_and_advance_work_from_the_entry_alone():
    ctx = StoryContext("req-1", "turn-1", "en")
    prepared = await PovPrepareTurnTool().execute(PrepareInput(ctx, world(), PrepareAction("free", "I wait")))
    projected = project_story_stage(prepared, "conflict")
    assert projected.bias == "conflict"
    assert restore_story_prepared_turn(projected.snapshot).stage == projected.stage
    assert restore_story_prepared_turn(projected.snapshot, "conflict").stage == projected.stage
    with pytest.raises(PreparedMismatch):
        restore_story_prepared_turn(projected.snapshot, None)
    done = await PovAdvanceWorldTool().execute(AdvanceInput(ctx, projected, WriterOutput("Lia nods at the gate.")))
    assert done.outcome == "committed" and done.snapshot.pending is None
    assert "[STORY STAGE RULES]" in POV_WRITER_STAGE_INSTRUCTIONS


async def test_deal_needs_no_model():
    n = init_narrative_snapshot(Line("The archive", "find what the key opens"), Line("Trust", "earn Lia's help"))
    r = await NarrativeDealBeatTool().execute(DealInput(StoryContext("r", "t"), n, "start"))
    assert r.packet.pending is None and r.packet.main_direction == "find what the key opens"


def test_the_writer_stage_rules_come_in_the_conversations_language() -> None:
    zh, en = story.writer_stage_instructions("zh-CN"), story.writer_stage_instructions("en")
    assert en == POV_WRITER_STAGE_INSTRUCTIONS and zh != en
    assert "[CURRENT STORY STAGE]" in zh and "不要复述用户的话" in zh
    assert "without repeating the user's words" in en
