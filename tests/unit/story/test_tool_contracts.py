"""The model-calling tools' shared contract, tool by tool: validation, one repair (two
responses at most, never a third), each tool's failure policy, the per-call timeout and
cancellation."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import pytest

from story.coordinator.initializer import PersonaSource, initialize_story
from story.tools.advance_world import AdvanceInput, PovAdvanceWorldTool, WriterOutput
from story.tools.common import StoryContext, StoryModelConfig
from story.tools.deal_beat import DealInput, NarrativeDealBeatTool
from story.tools.narrative_tools import (
    NarrativePlanCycleTool, NarrativeRebranchTool, NarrativeSettleEventTool, PlanInput, RebranchInput, SettleInput,
)
from story.tools.prepare_turn import PovPrepareTurnTool, PrepareAction, PrepareInput
from story.world.types import Intent, SignalDemand
from tests.unit.story.builders import ctx, goal, narrative, world
from tests.unit.story.fakes import FunctionModel
from tests.unit.story.test_coordinator import INIT

PROSE = "Lia turns the key. 'This is the old archive mark,' she says."
FREE = PrepareAction("free", "I walk to the patrol")


def adv(**kw):
    base = dict(invitation_delivered=False, shown_injection_ids=[], offstage_results=[], new_backgrounds=[],
                new_seeds=[], next_foreground=None, choices=[])
    return {**base, **kw}


def planned(gid, serves="main", angle="reveal", prereq=None, priority=3, gist=None):
    return {"id": gid, "serves": serves, "angle": angle, "gist": f"do {gid}" if gist is None else gist, "reward": "",
            "core": False, "priority": priority, "prerequisites": prereq or []}


def settle_json(completed=(), progress=(), emotion=None, status="assessed"):
    return {"status": status, "completed_goals": [{"goal_id": g, "evidence": e} for g, e in completed],
            "line_progress": [{"line": ln, "evidence": e, "note": ""} for ln, e in progress],
            "emotion": emotion, "new_pursuit": ""}


LINE = {"theme": "New ally", "direction": "win the captain", "experience": "warmth"}
GOOD_PLAN = {"goals": [planned(f"g{i}") for i in range(4)] + [planned("s", "sub")]}


@dataclass
class Spec:
    """One model tool: how to run it, a good answer, and how success and failure look."""

    name: str
    purpose: str
    run: Callable[[StoryModelConfig, StoryContext], Awaitable[Any]]
    good: Any
    ok: Callable[[Any], bool]
    failed: Callable[[Any], bool]


async def run_prepare(cfg, c):
    return await PovPrepareTurnTool(cfg).execute(PrepareInput(c, world(), FREE))


async def run_advance(cfg, c):
    p = await PovPrepareTurnTool().execute(PrepareInput(c, world(), FREE))
    return p, await PovAdvanceWorldTool(cfg).execute(AdvanceInput(c, p, WriterOutput(PROSE)))


N0 = narrative([goal("a"), goal("b", prereq=["a"])])


async def run_plan(cfg, c):
    return await NarrativePlanCycleTool(cfg).execute(PlanInput(c, narrative(), "setting"))


async def run_settle(cfg, c):
    return await NarrativeSettleEventTool(cfg).execute(SettleInput(c, N0, "ev1", PROSE, ["I hand over the key"]))


async def run_rebranch(cfg, c):
    return await NarrativeRebranchTool(cfg).execute(RebranchInput(c, N0, "sub", "setting"))


async def run_init(cfg, c):
    return await initialize_story(cfg, c, PersonaSource("Lia", "Lia guards the gate."), [], "hi")


SPECS = [
    Spec("prepare", "story.prepare", run_prepare, {"target_id": "bg-patrol", "companion_follows": True},
         lambda r: r.intent.kind == "cue" and r.snapshot.foreground.id == "bg-patrol",
         lambda r: r.intent == Intent("normal") and r.snapshot.foreground.id == "ev-key"
         and "classification_defaulted_normal" in {d.code for d in r.diagnostics}),
    Spec("advance", "story.advance", run_advance, adv(new_backgrounds=[{"id": "bg-rain", "title": "Rain", "summary": "", "kind": "progress"}]),
         lambda r: r[1].outcome == "committed" and any(b.id == "bg-rain" for b in r[1].snapshot.backgrounds),
         lambda r: r[1].outcome == "pending" and r[1].snapshot == r[0].snapshot
         and "advance_pending" in {d.code for d in r[1].diagnostics}),
    Spec("plan", "story.plan_cycle", run_plan, GOOD_PLAN,
         lambda r: r.outcome == "planned" and not r.snapshot.need_plan and len(r.snapshot.cycle.pending) == 5,
         lambda r: r.outcome == "failed" and r.snapshot == narrative() and r.snapshot.need_plan),
    Spec("settle", "story.settle", run_settle, settle_json(completed=[("a", "This is the old archive mark")]),
         lambda r: r.outcome == "settled" and r.snapshot.clock.completed_goals == ["a"],
         lambda r: r.outcome == "unknown" and r.snapshot == N0),
    Spec("rebranch", "story.rebranch", run_rebranch, {"main": None, "sub": LINE, "continuity": "the captain steps in"},
         lambda r: r.outcome == "rebranched" and r.snapshot.sub.theme == "New ally",
         lambda r: r.outcome == "failed" and r.snapshot == N0),
    Spec("initializer", "story_init.world", run_init, INIT,
         lambda r: r.world is not None and r.world.foreground.id == "ev-key",
         lambda r: r.world is None and r.narrative is None and "story_init_failed" in {d.code for d in r.diagnostics}),
]
IDS = [s.name for s in SPECS]


def usage_calls(result) -> int:
    return (result[1] if isinstance(result, tuple) else result).usage.calls


def codes(result) -> set[str]:
    return {d.code for d in (result[1] if isinstance(result, tuple) else result).diagnostics}


def scripted(*answers):
    return FunctionModel(lambda req, n: answers[n] if n < len(answers) else AssertionError("a third model call"))


def config(model, timeout_s: float | None = 5.0) -> StoryModelConfig:
    return StoryModelConfig(model, "story-cfg", timeout_s)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
async def test_a_good_answer_takes_one_call_with_the_strict_schema_and_config(spec):
    m = scripted(spec.good)
    r = await spec.run(config(m), ctx())
    assert spec.ok(r) and len(m.history) == 1 and usage_calls(r) == 1
    req = m.history[0]
    assert req.purpose == spec.purpose and req.model_config_id == "story-cfg" and 0 < req.timeout_s <= 5.0
    assert req.response_schema.schema["additionalProperties"] is False


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
async def test_bad_json_then_a_good_answer_is_repaired_with_two_calls(spec):
    m = scripted("{not json", spec.good)
    r = await spec.run(config(m), ctx())
    assert spec.ok(r) and len(m.history) == 2 and usage_calls(r) == 2
    repair = m.history[1].messages
    assert repair[-2].role == "assistant" and repair[-2].content == "{not json"
    assert repair[-1].role == "user" and "Your previous reply was invalid" in repair[-1].content
    assert "not valid JSON" in repair[-1].content
    assert "invalid_model_output" in codes(r)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
async def test_bad_twice_applies_the_failure_policy_and_never_asks_a_third_time(spec):
    m = scripted("{not json", "[]", spec.good)
    r = await spec.run(config(m), ctx())
    assert spec.failed(r) and len(m.history) == 2 and usage_calls(r) == 2
    assert {"invalid_model_output", "repair_exhausted"} <= codes(r)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
async def test_a_model_error_is_the_failure_policy_without_a_repair(spec):
    m = scripted(RuntimeError("upstream down"), spec.good)
    r = await spec.run(config(m), ctx())
    assert spec.failed(r) and len(m.history) == 1 and "model_failed" in codes(r)


class KeyRevoked(Exception):
    """A model error no retry can cure."""


def classified(model, recoverable: bool, seen: list, timeout_s: float | None = 5.0) -> StoryModelConfig:
    return StoryModelConfig(model, "story-cfg", timeout_s, lambda exc: seen.append(exc) or recoverable)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
async def test_a_model_error_the_host_calls_unrecoverable_is_raised_unchanged(spec):
    seen: list = []
    m = scripted(KeyRevoked("401 invalid api key"), spec.good)
    with pytest.raises(KeyRevoked):
        await spec.run(classified(m, False, seen), ctx())
    assert len(m.history) == 1 and [type(e) for e in seen] == [KeyRevoked]


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
async def test_a_model_error_the_host_calls_recoverable_is_the_failure_policy(spec):
    seen: list = []
    m = scripted(KeyRevoked("503 busy"), spec.good)
    r = await spec.run(classified(m, True, seen), ctx())
    assert spec.failed(r) and len(m.history) == 1 and "model_failed" in codes(r) and len(seen) == 1


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
async def test_an_invalid_answer_and_the_own_timeout_stay_recoverable_whatever_the_host_says(spec):
    seen: list = []
    bad = await spec.run(classified(scripted("{not json", "[]"), False, seen), ctx())
    slow = await spec.run(classified(scripted(asyncio.sleep(30, "never")), False, seen, timeout_s=0.05), ctx())
    assert spec.failed(bad) and "repair_exhausted" in codes(bad)
    assert spec.failed(slow) and "model_timeout" in codes(slow)
    assert seen == []  # the host classifies its model's errors, not the tool's own validation or budget


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
async def test_the_per_call_timeout_is_enforced_and_recorded(spec):
    m = scripted(asyncio.sleep(30, "never"), spec.good)
    t0 = time.monotonic()
    r = await spec.run(config(m, timeout_s=0.05), ctx())
    assert time.monotonic() - t0 < 2
    assert spec.failed(r) and len(m.history) == 1
    diag = next(d for d in (r[1] if isinstance(r, tuple) else r).diagnostics if d.code == "model_timeout")
    assert diag.data["purpose"] == spec.purpose and diag.data["timeout_s"] == 0.05


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
async def test_the_repair_shares_the_timeout_of_the_first_call(spec):
    async def slow_bad():
        await asyncio.sleep(0.5)
        return "{not json"

    m = FunctionModel(lambda req, n: slow_bad() if n == 0 else asyncio.sleep(30, "never"))
    t0 = time.monotonic()
    r = await spec.run(config(m, timeout_s=0.6), ctx())
    assert spec.failed(r) and len(m.history) == 2
    assert time.monotonic() - t0 < 0.95  # one 0.6 s budget for both responses (a fresh one would end at 1.1 s)
    assert "model_timeout" in codes(r)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
async def test_cancelling_during_a_model_call_propagates(spec):
    started = asyncio.Event()

    async def hang():
        started.set()
        await asyncio.sleep(30)

    m = FunctionModel(lambda req, n: hang())
    task = asyncio.create_task(spec.run(config(m), ctx()))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(m.history) == 1


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
async def test_the_contexts_cancellation_aborts_a_running_call(spec):
    cancel, started = asyncio.Event(), asyncio.Event()

    async def hang():
        started.set()
        await asyncio.sleep(30)

    m = FunctionModel(lambda req, n: hang())
    c = StoryContext("req", "t1", "en", cancellation=cancel)
    task = asyncio.create_task(spec.run(config(m), c))
    await started.wait()
    cancel.set()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 2)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
async def test_an_already_cancelled_context_makes_no_model_call(spec):
    cancel = asyncio.Event()
    cancel.set()
    m = scripted(spec.good)
    with pytest.raises(asyncio.CancelledError):
        await spec.run(config(m), StoryContext("req", "t1", "en", cancellation=cancel))
    assert m.history == []


# --- each tool's own validation rules: the repair names the rule; twice → the failure policy ---
RULES = [
    ("prepare", {"target_id": "uc-guild", "companion_follows": None}, "not an available event"),  # no invitation delivered
    ("prepare", {"target_id": "the-city", "companion_follows": None}, "not an available event"),
    ("prepare", {"kind": "cue", "target_id": "bg-patrol", "companion_follows": None}, "does not match the schema"),
    ("advance", adv(shown_injection_ids=["inj-x"]), "unknown injection id"),
    ("advance", adv(offstage_results=[{"source_id": "nowhere", "text": "t"}]), "unknown offstage source"),
    ("advance", adv(new_backgrounds=[{"id": f"b{i}", "title": "t", "summary": "", "kind": "progress"} for i in range(3)]),
     "at most 3 backgrounds"),
    ("advance", adv(invitation_delivered=True), "no undelivered invitation"),
    ("advance", {**adv(), "round": 99}, "does not match the schema"),  # clocks cannot even be expressed
    ("plan", {"goals": GOOD_PLAN["goals"][:4]}, "plan 5-7 new goals"),
    ("plan", {"goals": [planned(f"g{i}") for i in range(5)]}, "must serve the sub line"),
    ("plan", {"goals": GOOD_PLAN["goals"] + [planned("x", gist=" ")]}, "empty gist"),
    # Qwen2.5-0.5B planned five copies of one goal (the setting's first sentence, twice)
    ("plan", {"goals": GOOD_PLAN["goals"] + [planned("x", gist="do  g0")]}, "goals must differ: the gist 'do g0' is given 2 times"),
    ("plan", {"goals": GOOD_PLAN["goals"] + [planned("r", angle="reward")]}, "must depend on a setup goal"),
    ("plan", {"goals": GOOD_PLAN["goals"] + [planned("c1", prereq=["c2"]), planned("c2", prereq=["c1"])]}, "cycle"),
    ("plan", {"goals": GOOD_PLAN["goals"] + [planned("p", priority=9)]}, "outside 1..5"),
    ("plan", {"goals": GOOD_PLAN["goals"] + [planned("d", prereq=["ghost"])]}, "unknown goal"),
    ("settle", settle_json(completed=[("ghost", "Lia turns the key")]), "not an open goal"),
    ("settle", settle_json(emotion={"valence": 2, "arousal": 0.5, "dominance": 0.5}), "emotion out of range"),
    ("rebranch", {"main": LINE, "sub": LINE, "continuity": "c"}, "Expected `null`, got `object` - at `$.main`"),  # sub: main null by schema
    ("rebranch", {"main": None, "sub": dict(LINE, theme=""), "continuity": "c"}, "needs a theme and a direction"),
    ("rebranch", {"main": None, "sub": LINE, "continuity": " "}, "continuity note is required"),
    ("initializer", dict(INIT, backgrounds=INIT["backgrounds"] * 4), "at most 3 backgrounds"),
    ("initializer", dict(INIT, undercurrents=[dict(INIT["undercurrents"][0], id=f"u{i}", clue=f"watcher {i}", invitation=f"meet {i}")
                                             for i in range(6)]), "at most 5 undercurrents"),
    ("initializer", dict(INIT, backgrounds=[dict(INIT["backgrounds"][0], countdown=0)]), "countdown must be 1..6"),
]


@pytest.mark.parametrize("tool,bad,rule", RULES, ids=[f"{t}:{r}" for t, _, r in RULES])
async def test_each_rule_is_repaired_once_then_the_failure_policy_applies(tool, bad, rule):
    spec = next(s for s in SPECS if s.name == tool)
    m = scripted(bad, bad, spec.good)
    r = await spec.run(config(m), ctx())
    assert len(m.history) == 2 and rule in m.history[1].messages[-1].content
    assert spec.failed(r)


@pytest.mark.parametrize("tool,bad,rule", RULES, ids=[f"{t}:{r}" for t, _, r in RULES])
async def test_each_rule_violation_then_a_good_answer_succeeds(tool, bad, rule):
    spec = next(s for s in SPECS if s.name == tool)
    m = scripted(bad, spec.good)
    assert spec.ok(await spec.run(config(m), ctx())) and len(m.history) == 2


async def test_a_settle_claim_without_verbatim_evidence_is_dropped_not_repaired():
    m = scripted(settle_json(completed=[("a", "Lia opens the archive")], progress=[("main", "the mark glows")]))
    r = await run_settle(config(m), ctx())
    assert r.outcome == "settled" and len(m.history) == 1 and r.snapshot.clock.completed_goals == []
    assert r.snapshot.main.cursor == 0 and [d.code for d in r.diagnostics].count("claim_rejected") == 2


async def test_a_settle_claim_before_its_prerequisite_is_dropped():
    m = scripted(settle_json(completed=[("b", "Lia turns the key")]))
    r = await run_settle(config(m), ctx())
    assert r.snapshot.clock.completed_goals == [] and "claim_rejected" in codes(r)


async def test_a_signal_is_accepted_once_the_invitation_was_delivered():
    from msgspec.structs import replace
    w = replace(world(), pending_signal_demand=SignalDemand("uc-guild", "Meet at the well", 0, delivered=True))
    m = scripted({"target_id": "uc-guild", "companion_follows": False})
    p = await PovPrepareTurnTool(config(m)).execute(PrepareInput(ctx(), w, FREE))
    assert p.intent.kind == "signal" and p.snapshot.foreground.id == "uc-guild" and p.snapshot.foreground.participants == []


# --- the sixth tool has no model: its policy rules ---------------------------------------------
async def test_deal_beat_never_calls_a_model_and_asks_for_a_plan_when_needed():
    r = await NarrativeDealBeatTool().execute(DealInput(ctx(), narrative(), "start"))
    assert r.packet.pending is None and r.next_actions == ["plan-cycle"] and "no_eligible_goal" in codes(r)
    assert r.usage.calls == 0


async def test_deal_beat_respects_cancellation_and_same_turn_idempotency():
    cancel = asyncio.Event()
    cancel.set()
    with pytest.raises(asyncio.CancelledError):
        await NarrativeDealBeatTool().execute(DealInput(StoryContext("r", "t", cancellation=cancel), N0, "start"))
    first = await NarrativeDealBeatTool().execute(DealInput(ctx(), N0, "develop"))
    again = await NarrativeDealBeatTool().execute(DealInput(ctx(), first.snapshot, "develop"))
    assert first.packet.pending.id == "a" and again.packet == first.packet and again.snapshot == first.snapshot


# New ids are the program's: a repeated or taken slug is renamed, not sent back for a repair.

async def test_advance_renames_a_new_id_that_exists_or_repeats_instead_of_repairing():
    bad = adv(new_backgrounds=[{"id": "uc-guild", "title": "t", "summary": "", "kind": "progress"}],
              new_seeds=[{"id": "uc-guild", "owner": "Guild", "title": "t", "clue": "", "invitation": ""}])
    m = FunctionModel(lambda req, n: bad)
    _, r = await run_advance(config(m), ctx())
    assert len(m.history) == 1 and r.outcome == "committed"
    assert [b.id for b in r.snapshot.backgrounds][-1] == "uc-guild-2"
    assert r.snapshot.seed_pool[-1].id == "uc-guild-3"


async def test_plan_renames_repeated_goal_ids_instead_of_repairing():
    m = FunctionModel(lambda req, n: {"goals": GOOD_PLAN["goals"][:4] + [planned("g0", "sub", gist="win her trust")]})
    r = await run_plan(config(m), ctx())
    assert len(m.history) == 1 and r.outcome == "planned"
    assert [g.id for g in r.snapshot.cycle.pending] == ["g0", "g1", "g2", "g3", "g0-2"]


async def test_initializer_makes_every_id_distinct_instead_of_repairing():
    same = dict(INIT, seeds=[dict(INIT["seeds"][0], id="ev-key")])
    m = FunctionModel(lambda req, n: same)
    r = await run_init(config(m), ctx())
    assert len(m.history) == 1 and r.world is not None and r.world.foreground.id == "ev-key"
    assert r.world.seed_pool[0].id == "ev-key-2"


async def test_settle_counts_the_first_claim_per_line_instead_of_repairing():
    m = FunctionModel(lambda req, n: settle_json(progress=[("main", "Lia turns the key"), ("main", "the old archive")]))
    r = await run_settle(config(m), ctx())
    assert len(m.history) == 1 and r.outcome == "settled"


async def test_new_seeds_and_threads_owned_by_the_protected_character_are_not_taken():
    m = FunctionModel(lambda req, n: adv(new_seeds=[{"id": "s9", "owner": " lia ", "title": "t", "clue": "", "invitation": ""}]))
    _, r = await run_advance(config(m), ctx())
    assert len(m.history) == 1 and r.outcome == "committed" and "s9" not in {s.id for s in r.snapshot.seed_pool}
    m = FunctionModel(lambda req, n: dict(INIT, seeds=[dict(INIT["seeds"][0], owner="LIA")]))
    r = await run_init(config(m), ctx())
    assert len(m.history) == 1 and r.world is not None and r.world.seed_pool == []
