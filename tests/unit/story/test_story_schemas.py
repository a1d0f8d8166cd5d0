"""Every Story structured call sends a bounded, strict schema whose ids are the current state's.

A schema-following server (OpenAI strict mode, a llama.cpp grammar, the simulator) writes exactly
what the schema allows: a free string without ``maxLength`` or a list without ``maxItems`` lets
a small model loop until its token budget ends, and an id that is any string is almost never an
existing one. So for each call, in states with and without the things an id may name: no
unbounded part, strict-mode rules met, a token budget below 4096, ids as ``enum``s of the current
state (an empty choice as ``maxItems: 0``), and answers a schema-following model sends (the
simulator's generator) pass the tool's checks on the first try.
"""

from __future__ import annotations

import random

import pytest
from msgspec.structs import replace

from app.llm.schema import strict_problems, unbounded
from app.llm.simulator.instances import generate_instance
from story.coordinator.initializer import PersonaSource, initialize_story
from story.tools.advance_world import AdvanceInput, PovAdvanceWorldTool, WriterOutput
from story.tools.narrative_tools import (
    NarrativePlanCycleTool, NarrativeRebranchTool, NarrativeSettleEventTool, PlanInput, RebranchInput, SettleInput,
)
from story.tools.prepare_turn import PovPrepareTurnTool, PrepareAction, PrepareInput
from story.world.types import Injection, SignalDemand, Undercurrent
from tests.unit.story.builders import cfg, ctx, goal, narrative, world
from tests.unit.story.fakes import FunctionModel

PROSE = "Lia turns the key in her hand. 'This is the old archive mark,' she says, and the gate creaks open."
FREE = PrepareAction("free", "I walk over to the returning patrol")
MAX_TOKENS = 4096


def guild(stage: int) -> Undercurrent:
    return Undercurrent("uc-guild", "Ash Guild", "The guild hunts the key", "a hooded watcher", "Meet at the well", stage=stage)


def busy_world():
    """Pending consequences, an undelivered invitation and a full offstage: every per-request bound in use."""
    w = world(undercurrents=[guild(3)])
    full = [*w.backgrounds, *(replace(w.backgrounds[0], id=f"bg-{i}") for i in range(2))]
    return replace(w, backgrounds=full, pending_injections=[Injection("inj-1", "bg-patrol", "Boots at the gate")],
                   pending_signal_demand=SignalDemand("uc-guild", "Meet at the well", 0))


def invited_world():
    return replace(world(undercurrents=[guild(3)]),
                   pending_signal_demand=SignalDemand("uc-guild", "Meet at the well", 0, delivered=True))


GOALS = [goal("a"), goal("b", prereq=["a"]), goal("r", angle="reward", prereq=["a"], reward="a pass")]


async def prepare(model, w=None):
    return await PovPrepareTurnTool(cfg(model)).execute(PrepareInput(ctx(), w or world(), FREE))


async def advance(model, w=None):
    p = await PovPrepareTurnTool().execute(PrepareInput(ctx(), w or world(), PrepareAction("free", "I wait")))
    return await PovAdvanceWorldTool(cfg(model)).execute(AdvanceInput(ctx(), p, WriterOutput(PROSE)))


async def plan(model, n=None):
    n = n or narrative()
    return await NarrativePlanCycleTool(cfg(model)).execute(PlanInput(ctx(), replace(n, need_plan=True), "setting"))


async def settle(model, n=None):
    return await NarrativeSettleEventTool(cfg(model)).execute(SettleInput(ctx(), n or narrative(GOALS), "ev1", PROSE, ["I wait"]))


async def rebranch(model, scope="sub"):
    return await NarrativeRebranchTool(cfg(model)).execute(
        RebranchInput(ctx(), narrative(GOALS), scope, "setting", "find the caravan" if scope == "main" else None))


async def init(model):
    return await initialize_story(cfg(model), ctx(), PersonaSource("Lia", "Lia guards the gate."), [], "hi")


CALLS = {
    "init": init,
    "prepare": prepare,
    "prepare:invitation delivered": lambda m: prepare(m, invited_world()),
    "advance": advance,
    "advance:busy world": lambda m: advance(m, busy_world()),
    "plan:first": plan,
    "plan:with goals": lambda m: plan(m, narrative(GOALS)),
    "settle": settle,
    "settle:no open goals": lambda m: settle(m, narrative()),
    "rebranch:sub": rebranch,
    "rebranch:main": lambda m: rebranch(m, "main"),
}


def simulated(seed: int = 0) -> FunctionModel:
    """Answers as the simulator does: an instance of the schema it was sent, quoting the request's text."""
    rng = random.Random(seed)

    def answer(request, n):
        users = [m.content for m in request.messages if m.role == "user"]
        return generate_instance(request.response_schema.schema, rng, "en", max(users, key=len))

    return FunctionModel(answer)


def schema(model: FunctionModel, i: int = 0) -> dict:
    return model.history[i].response_schema.schema


@pytest.mark.parametrize("name", CALLS)
async def test_every_story_call_sends_a_bounded_strict_schema_and_a_token_budget(name):
    m = simulated()
    await CALLS[name](m)
    assert m.history, "the call reached the model"
    for request in m.history:
        sent = request.response_schema.schema
        assert unbounded(sent) == [], name
        assert strict_problems(sent) == [], name
        assert 0 < request.max_tokens < MAX_TOKENS, (name, request.max_tokens)


@pytest.mark.parametrize("name", CALLS)
@pytest.mark.parametrize("seed", range(8))
async def test_a_schema_following_answer_passes_the_checks_on_the_first_try(name, seed):
    m = simulated(seed)
    result = await CALLS[name](m)
    result = result[1] if isinstance(result, tuple) else result
    codes = {d.code for d in result.diagnostics}
    assert len(m.history) == 1 and "invalid_model_output" not in codes, result.diagnostics


async def test_prepare_offers_exactly_the_available_events_and_the_delivered_invitation():
    m = simulated()
    await prepare(m)
    await prepare(m, invited_world())
    target = [b for b in schema(m, 0)["properties"]["target_id"]["anyOf"] if b.get("type") == "string"]
    assert target[0]["enum"] == ["bg-patrol"]  # the stage-1 undercurrent is not reachable yet
    target = [b for b in schema(m, 1)["properties"]["target_id"]["anyOf"] if b.get("type") == "string"]
    assert target[0]["enum"] == ["uc-guild", "bg-patrol"]


async def test_prepare_does_not_ask_when_there_is_nothing_to_turn_to():
    m = simulated()
    p = await prepare(m, world(backgrounds=[]))
    assert m.history == [] and p.intent.kind == "normal" and "classification_skipped" in {d.code for d in p.diagnostics}


async def test_advance_names_only_pending_consequences_and_existing_sources_and_respects_capacity():
    m = simulated()
    await advance(m)
    await advance(m, busy_world())
    calm, busy = schema(m, 0)["properties"], schema(m, 1)["properties"]
    assert calm["shown_injection_ids"]["maxItems"] == 0 and calm["invitation_delivered"]["enum"] == [False]
    assert calm["new_backgrounds"]["maxItems"] == 2
    assert busy["shown_injection_ids"]["items"]["enum"] == ["inj-1"] and "enum" not in busy["invitation_delivered"]
    assert busy["new_backgrounds"]["maxItems"] == 0
    sources = busy["offstage_results"]["items"]["properties"]["source_id"]["enum"]
    assert sources[0] == "ev-key" and {"bg-patrol", "bg-0", "bg-1", "uc-guild"} <= set(sources) and "inj-1" not in sources


async def test_plan_prerequisites_name_existing_setup_goals_and_a_reward_needs_one():
    m = simulated()
    await plan(m)
    await plan(m, narrative(GOALS))
    first, later = (schema(m, i)["properties"]["goals"] for i in (0, 1))
    assert (first["minItems"], first["maxItems"]) == (5, 7)
    assert first["items"]["properties"]["prerequisites"]["maxItems"] == 0
    assert "reward" not in first["items"]["properties"]["angle"]["enum"]
    assert later["items"]["properties"]["prerequisites"]["items"]["enum"] == ["a", "b"]  # the open reward goal is no setup
    assert "reward" in later["items"]["properties"]["angle"]["enum"]


async def test_settle_claims_name_open_goals_and_quote_the_accepted_text():
    m = simulated(2)
    r = await settle(m)
    claims = schema(m)["properties"]["completed_goals"]
    assert claims["items"]["properties"]["goal_id"]["enum"] == ["a", "b", "r"] and claims["maxItems"] == 3
    assert r.outcome == "settled" and r.snapshot.clock.completed_goals == ["a"] and r.snapshot.main.cursor == 1
    assert "claim_rejected" not in {d.code for d in r.diagnostics}  # the quotes occur verbatim in the prose
    m = simulated()
    await settle(m, narrative())
    assert schema(m)["properties"]["completed_goals"]["maxItems"] == 0


async def test_a_sub_rebranch_schema_keeps_main_null():
    m = simulated()
    await rebranch(m)
    await rebranch(m, "main")
    assert schema(m, 0)["properties"]["main"] == {"type": "null"}
    assert schema(m, 1)["properties"]["main"]["type"] == "object"


async def test_the_prompts_state_the_limits_the_schema_enforces():
    m = simulated()
    await init(m)
    sent = schema(m)
    system = m.history[0].messages[0].content
    assert sent["properties"]["backgrounds"]["maxItems"] == 3 and "up to 3 offstage backgrounds" in system
    title = sent["properties"]["foreground"]["properties"]["title"]["maxLength"]
    assert f"titles and owners at most {title} characters" in system
