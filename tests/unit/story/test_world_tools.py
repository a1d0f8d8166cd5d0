import msgspec
import pytest
from msgspec.structs import replace

from story.tools.advance_world import AdvanceInput, PovAdvanceWorldTool, WriterOutput
from story.tools.common import InvalidToolInput, PendingTurnUnresolved, ToolHooks
from story.tools.prepare_turn import PovPrepareTurnTool, PrepareAction, PrepareInput
from story.world.stage import PreparedMismatch, project_stage, restore_prepared
from story.world.types import Choice, Intent, SignalDemand
from tests.unit.story.builders import cfg, ctx, world
from tests.unit.story.fakes import ScriptedModel

FREE = PrepareAction("free", "I hand Lia the key but stay outside")


def advance_json(**kw):
    base = dict(invitation_delivered=False, shown_injection_ids=[], offstage_results=[], new_backgrounds=[],
                new_seeds=[], next_foreground=None, choices=[])
    base.update(kw)
    return base


async def test_free_text_without_a_model_is_a_normal_action():
    p = await PovPrepareTurnTool().execute(PrepareInput(ctx(), world(), FREE))
    assert p.intent == Intent("normal") and p.stage.honour_actions == [FREE.text]


async def test_free_text_is_classified_by_the_model_and_a_cue_moves_the_scene():
    m = ScriptedModel().enqueue("story.prepare", {"target_id": "bg-patrol", "companion_follows": True})
    p = await PovPrepareTurnTool(cfg(m)).execute(PrepareInput(ctx(), world(), FREE))
    assert p.intent.kind == "cue" and p.snapshot.foreground.id == "bg-patrol"
    assert p.snapshot.foreground.participants == ["Lia"]
    assert m.history[0].response_schema.schema["additionalProperties"] is False


async def test_a_classified_target_that_names_no_event_is_repaired_then_defaults_to_normal():
    bad = {"target_id": "the-city", "companion_follows": None}
    m = ScriptedModel().enqueue("story.prepare", bad, bad)
    p = await PovPrepareTurnTool(cfg(m)).execute(PrepareInput(ctx(), world(), FREE))
    assert p.intent == Intent("normal") and len(m.history) == 2
    assert {d.code for d in p.diagnostics} >= {"repair_exhausted", "classification_defaulted_normal"}


async def test_host_intent_with_an_unknown_target_is_rejected():
    act = PrepareAction("intent", "go", Intent("cue", "nowhere"))
    with pytest.raises(InvalidToolInput):
        await PovPrepareTurnTool().execute(PrepareInput(ctx(), world(), act))


async def test_a_signal_choice_answers_only_a_delivered_invitation():
    w = replace(world(), choices=[Choice("I go to the well", "meeting", True)],
                pending_signal_demand=SignalDemand("uc-guild", "Meet at the well", 0, delivered=True))
    p = await PovPrepareTurnTool().execute(PrepareInput(ctx(), w, PrepareAction("choice", index=0)))
    assert p.intent == Intent("signal", "uc-guild") and "signal_answered" in p.flags
    assert p.snapshot.foreground.id == "uc-guild" and p.snapshot.pending_signal_demand is None


async def test_same_turn_and_action_restore_the_same_prepared_turn_without_rerolling():
    m = ScriptedModel().enqueue("story.prepare", {"target_id": None, "companion_follows": None})
    tool = PovPrepareTurnTool(cfg(m))
    first = await tool.execute(PrepareInput(ctx("t1"), world(), FREE))
    again = await tool.execute(PrepareInput(ctx("t1"), first.snapshot, FREE))
    assert again.snapshot == first.snapshot and again.dice == first.dice and again.stage == first.stage
    assert len(m.history) == 1  # no second classification either


async def test_a_different_turn_cannot_prepare_on_an_unresolved_pending_turn():
    first = await PovPrepareTurnTool().execute(PrepareInput(ctx("t1"), world(), FREE))
    with pytest.raises(PendingTurnUnresolved):
        await PovPrepareTurnTool().execute(PrepareInput(ctx("t2"), first.snapshot, FREE))


async def test_restore_rejects_a_saved_world_or_stage_that_was_edited():
    p = await PovPrepareTurnTool().execute(PrepareInput(ctx(), world(), FREE))
    forged = replace(p.snapshot, rng_state=p.snapshot.rng_state + 1)
    with pytest.raises(PreparedMismatch):
        restore_prepared(forged)
    with pytest.raises(PreparedMismatch):
        restore_prepared(p.snapshot, saved_stage=replace(p.stage, clues=["forged"]))
    assert restore_prepared(p.snapshot, saved_stage=p.stage).stage == p.stage


async def test_a_bias_given_to_restore_must_be_the_recorded_one():
    p = project_stage(await PovPrepareTurnTool().execute(PrepareInput(ctx(), world(), FREE)), "conflict")
    assert restore_prepared(p.snapshot, "conflict").bias == "conflict"
    for other in ("progress", None):  # None is a bias too: "no preference was projected"
        with pytest.raises(PreparedMismatch, match="bias"):
            restore_prepared(p.snapshot, other)


async def test_restore_without_a_bias_asserts_nothing_and_keeps_the_recorded_one():
    p = project_stage(await PovPrepareTurnTool().execute(PrepareInput(ctx(), world(), FREE)), "conflict")
    assert restore_prepared(p.snapshot).bias == "conflict"
    plain = await PovPrepareTurnTool().execute(PrepareInput(ctx(), world(), FREE))
    assert restore_prepared(plain.snapshot, None).bias is None and restore_prepared(plain.snapshot).bias is None
    with pytest.raises(PreparedMismatch):
        restore_prepared(plain.snapshot, "progress")


async def test_stage_never_shows_hidden_threads_seeds_or_counters():
    p = await PovPrepareTurnTool().execute(PrepareInput(ctx(), world(), FREE))
    text = msgspec.json.encode(p.stage).decode()
    for hidden in ("uc-guild", "seed-caravan", "Ash Guild", "countdown", "rng", "stage_rounds"):
        assert hidden not in text


async def test_advance_without_a_model_commits_and_moves_the_round():
    p = await PovPrepareTurnTool().execute(PrepareInput(ctx(), world(), FREE))
    r = await PovAdvanceWorldTool().execute(AdvanceInput(ctx(), p, WriterOutput("Lia takes the key.")))
    assert r.outcome == "committed" and r.snapshot.round == 1 and r.snapshot.pending is None
    dup = await PovAdvanceWorldTool().execute(AdvanceInput(ctx(), replace(p, snapshot=r.snapshot), WriterOutput("x")))
    assert dup.outcome == "duplicate"


async def test_advance_with_an_unreliable_proposal_stays_pending_and_keeps_the_prepared_state():
    m = ScriptedModel().enqueue("story.advance", "not json", advance_json(shown_injection_ids=["made-up"]))
    p = await PovPrepareTurnTool().execute(PrepareInput(ctx(), world(), FREE))
    r = await PovAdvanceWorldTool(cfg(m)).execute(AdvanceInput(ctx(), p, WriterOutput("prose")))
    assert r.outcome == "pending" and r.snapshot == p.snapshot and len(m.history) == 2


async def test_advance_rejects_a_fourth_background_and_drops_protected_seeds():
    m = ScriptedModel().enqueue("story.advance",
                                advance_json(new_backgrounds=[{"id": f"b{i}", "title": "t", "summary": "", "kind": "progress"} for i in range(3)]),
                                advance_json(new_seeds=[{"id": "s9", "owner": "Lia", "title": "t", "clue": "", "invitation": ""}]))
    p = await PovPrepareTurnTool().execute(PrepareInput(ctx(), world(), FREE))
    r = await PovAdvanceWorldTool(cfg(m)).execute(AdvanceInput(ctx(), p, WriterOutput("prose")))
    assert r.outcome == "committed" and len(m.history) == 2  # the fourth background was repaired away
    assert "s9" not in {s.id for s in r.snapshot.seed_pool}  # the protected owner's seed is not taken


async def test_advance_applies_a_valid_proposal_but_the_program_sets_clocks():
    m = ScriptedModel().enqueue("story.advance", advance_json(
        new_backgrounds=[{"id": "bg-rain", "title": "Rain", "summary": "", "kind": "progress"}],
        next_foreground={"id": "ev-archive", "title": "The archive", "summary": ""}))
    p = await PovPrepareTurnTool().execute(PrepareInput(ctx(), world(), FREE))
    r = await PovAdvanceWorldTool(cfg(m)).execute(AdvanceInput(ctx(), p, WriterOutput("prose")))
    assert r.outcome == "committed"
    assert next(b for b in r.snapshot.backgrounds if b.id == "bg-rain").countdown == 3
    assert r.snapshot.pending_next_foreground.id == "ev-archive"


async def test_advance_requires_the_context_turn_to_match_the_prepared_turn():
    p = await PovPrepareTurnTool().execute(PrepareInput(ctx("t1"), world(), FREE))
    with pytest.raises(InvalidToolInput):
        await PovAdvanceWorldTool().execute(AdvanceInput(ctx("t2"), p, WriterOutput("prose")))


async def test_hooks_run_before_and_after_execute_and_after_turn_only_when_called():
    seen = []

    async def before(inp):
        seen.append("before")

    async def after(inp, res):
        seen.append("after")

    async def turn(results):
        seen.append(("turn", len(results)))

    tool = PovPrepareTurnTool(hooks=ToolHooks(before, after, turn))
    res = await tool.execute(PrepareInput(ctx(), world(), FREE))
    assert seen == ["before", "after"]
    await tool.after_turn([res])
    assert seen[-1] == ("turn", 1)


# --- found by the property tests ---------------------------------------------------------------
async def test_the_writers_successor_must_be_a_new_event():
    from story.world.types import NextForeground
    p = await PovPrepareTurnTool().execute(PrepareInput(ctx(), world(), FREE))
    with pytest.raises(InvalidToolInput):
        await PovAdvanceWorldTool().execute(AdvanceInput(ctx(), p, WriterOutput("prose", next_foreground=NextForeground("bg-patrol", "t"))))
    m = ScriptedModel().enqueue("story.advance", advance_json(new_backgrounds=[{"id": "ev-next", "title": "t", "summary": "", "kind": "progress"}]))
    r = await PovAdvanceWorldTool(cfg(m)).execute(AdvanceInput(ctx(), p, WriterOutput("prose", next_foreground=NextForeground("ev-next", "t"))))
    assert r.outcome == "committed" and len(m.history) == 1  # the model's clashing slug is renamed, not repaired
    assert r.snapshot.pending_next_foreground.id == "ev-next"
    assert "ev-next-2" in {g.id for g in r.snapshot.backgrounds}


async def test_ids_of_ended_events_are_retired_and_never_reused():
    m = ScriptedModel().enqueue("story.prepare", {"target_id": "bg-patrol", "companion_follows": True})
    m.enqueue("story.advance", advance_json(next_foreground={"id": "ev-key", "title": "again", "summary": ""}))
    p = await PovPrepareTurnTool(cfg(m)).execute(PrepareInput(ctx(), world(), FREE))
    r = await PovAdvanceWorldTool(cfg(m)).execute(AdvanceInput(ctx(), p, WriterOutput("prose")))
    assert r.outcome == "committed" and r.snapshot.retired_ids == ["ev-key"]  # it just ended this turn
    assert r.snapshot.pending_next_foreground.id == "ev-key-2"  # so the proposal's slug is renamed


def test_a_blocked_invitation_keeps_its_stage_counter_bounded():
    from story.world.mechanics import run_mechanics
    from story.world.types import Undercurrent
    w = replace(world(undercurrents=[Undercurrent("uc-guild", "Ash Guild", "t", "c", "meet", stage=3, stage_rounds=6)]),
                pending_signal_demand=SignalDemand("uc-guild", "meet", 0))
    m = run_mechanics(w, Intent("normal"), "")
    assert m.dice[0].outcome == "blocked" and m.snapshot.undercurrents[0].stage_rounds == 6
