"""The Story library: six tools that can be composed on their own (the Story tools seed).

``from story import ...`` gives every name of the seed's public call shape in Python spelling,
plus the inputs, results, policies, hooks and errors a host needs. Nothing here imports the app,
a web framework, a database or a model client: the host injects its model (``StoryModelConfig``
around anything with the ``story.ports.StructuredModel`` shape) and keeps the snapshots itself.

The modules use short names inside their own domain (``story.world.state.create_world_snapshot``,
``story.world.stage.project_stage``); this entry spells them as the seed does
(``create_story_world_snapshot``, ``project_story_stage``), and every public name is listed in
``__all__``. A minimal composition, with a fake model, is in the README ("Using the Story library
on its own") and runs as a test.
"""

from story.narrative.deal import BeatPacket, Bias, DealtGoal, EmotionGuide
from story.narrative.settle import NextAction
from story.narrative.state import NarrativeInvalid, init_narrative_snapshot, parse_narrative_snapshot
from story.narrative.types import Goal, Line, NarrativePolicy, NarrativeSnapshot
from story.ports import ChatMessage, ChatModel, ModelRequest, ResponseSchema, StructuredModel
from story.tools.advance_world import AdvanceInput, AdvanceResult, PovAdvanceWorldTool, WriterOutput
from story.tools.common import (
    Diagnostic, InvalidToolInput, PendingTurnUnresolved, StoryContext, StoryError, StoryModelConfig, ToolHooks, Usage,
)
from story.tools.deal_beat import DealInput, DealResult, NarrativeDealBeatTool, NarrativeDealOptions
from story.tools.narrative_tools import (
    NarrativePlanCycleTool, NarrativeRebranchTool, NarrativeResult, NarrativeSettleEventTool, NarrativeToolOptions,
    PlanInput, RebranchInput, SettleInput,
)
from story.tools.prepare_turn import PovPrepareTurnTool, PrepareAction, PrepareInput
from story.world.mechanics import DiceRoll, WorldEvent
from story.world.stage import WRITER_STAGE_INSTRUCTIONS as POV_WRITER_STAGE_INSTRUCTIONS
from story.world.stage import PreparedMismatch, StageEvent, StoryPreparedTurn, StoryStage, writer_stage_instructions
from story.world.stage import project_stage as project_story_stage
from story.world.stage import restore_prepared as restore_story_prepared_turn
from story.world.state import WorldInvalid
from story.world.state import create_world_snapshot as create_story_world_snapshot
from story.world.state import parse_world_snapshot as parse_story_world_snapshot
from story.world.types import Background, Choice, Foreground, Intent, NextForeground, Seed, Undercurrent, WorldPolicy
from story.world.types import WorldSnapshot as StoryWorldSnapshot

__all__ = [
    # the seed's call shape
    "create_story_world_snapshot", "parse_story_world_snapshot", "init_narrative_snapshot", "parse_narrative_snapshot",
    "PovPrepareTurnTool", "PovAdvanceWorldTool", "NarrativePlanCycleTool", "NarrativeDealBeatTool",
    "NarrativeSettleEventTool", "NarrativeRebranchTool", "project_story_stage", "restore_story_prepared_turn",
    "POV_WRITER_STAGE_INSTRUCTIONS", "StoryContext", "StoryModelConfig",
    "writer_stage_instructions",  # the same rules in the conversation's language
    # the model port a host implements
    "StructuredModel", "ChatModel", "ModelRequest", "ChatMessage", "ResponseSchema",
    # world: snapshot parts, policy, prepare and advance
    "StoryWorldSnapshot", "Foreground", "Background", "Undercurrent", "Seed", "WorldPolicy", "Intent", "Choice",
    "NextForeground", "PrepareInput", "PrepareAction", "StoryPreparedTurn", "StoryStage", "StageEvent", "DiceRoll",
    "WorldEvent", "AdvanceInput", "WriterOutput", "AdvanceResult",
    # narrative: snapshot parts, policy, options, plan / deal / settle / rebranch
    "NarrativeSnapshot", "Line", "Goal", "NarrativePolicy", "NarrativeToolOptions", "NarrativeDealOptions",
    "PlanInput", "DealInput", "SettleInput", "RebranchInput", "NarrativeResult", "DealResult", "BeatPacket",
    "DealtGoal", "EmotionGuide", "Bias", "NextAction",
    # shared: hooks, diagnostics, usage, errors
    "ToolHooks", "Diagnostic", "Usage", "StoryError", "InvalidToolInput", "PendingTurnUnresolved", "PreparedMismatch",
    "WorldInvalid", "NarrativeInvalid",
]
