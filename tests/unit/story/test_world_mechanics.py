import msgspec
import pytest
from msgspec.structs import replace

from story.world.mechanics import run_mechanics
from story.world.state import WorldInvalid, create_world_snapshot
from story.world.types import Background, Foreground, Intent, Seed, SignalDemand, Undercurrent, WorldPolicy
from tests.unit.story.builders import world


def committed(w):
    """What an accepted turn does to the clocks (the advance tool's mechanical part)."""
    return replace(w, round=w.round + 1, foreground=replace(w.foreground, rounds=w.foreground.rounds + 1))


def play(w, turns):
    phases = []
    for _ in range(turns):
        m = run_mechanics(w, Intent("normal"), "wait")
        phases.append((m.snapshot.foreground.id, m.snapshot.foreground.phase, m.flags))
        w = committed(m.snapshot)
    return phases, w


def test_foreground_develops_at_most_two_rounds_then_ends_and_waits_for_a_successor():
    phases, _ = play(world(backgrounds=[], undercurrents=[], seeds=[]), 6)
    assert [p[1] for p in phases] == ["start", "develop", "develop", "end", "end", "end"]
    assert "awaiting_successor" in phases[4][2]


def test_ended_foreground_hands_over_to_the_pending_successor():
    from story.world.types import NextForeground
    w = world(backgrounds=[], undercurrents=[], seeds=[])
    w = replace(w, foreground=replace(w.foreground, rounds=4), pending_next_foreground=NextForeground("ev-2", "Archive"))
    m = run_mechanics(w, Intent("normal"), "")
    assert m.snapshot.foreground.id == "ev-2" and m.snapshot.foreground.phase == "start"
    assert [e.kind for e in m.events] == ["event_ended", "event_started"]


def test_more_than_three_backgrounds_are_refused():
    bgs = [Background(f"bg{i}", "x") for i in range(4)]
    with pytest.raises(WorldInvalid):
        world(backgrounds=bgs)
    assert len(world(backgrounds=bgs[:3]).backgrounds) == 3


def test_more_than_five_undercurrents_are_refused():
    ucs = [Undercurrent(f"u{i}", "Guild", "t") for i in range(6)]
    with pytest.raises(WorldInvalid):
        world(undercurrents=ucs)


@pytest.mark.parametrize("phase_rounds,expected", [(0, "delayed"), (1, "obstructs"), (3, "took_over")])
def test_expired_background_delays_obstructs_or_takes_over_by_phase(phase_rounds, expected):
    w = world(backgrounds=[Background("bg-p", "Patrol", "boots", "conflict", 1)], undercurrents=[], seeds=[])
    w = replace(w, foreground=replace(w.foreground, rounds=phase_rounds))
    m = run_mechanics(w, Intent("normal"), "")
    assert any(f.startswith(f"background_{expected}") for f in m.flags)
    if expected == "took_over":
        assert m.snapshot.foreground.id == "bg-p"
    if expected == "obstructs":
        assert m.snapshot.pending_injections[-1].kind == "obstacle"


def test_undercurrents_below_the_minimum_of_two_are_never_invented():
    w = world(undercurrents=[Undercurrent("u1", "Guild", "t", "clue")], seeds=[])
    m = run_mechanics(w, Intent("normal"), "")
    assert [u.id for u in m.snapshot.undercurrents] == ["u1"]
    assert any(d.code == "undercurrent_below_target" for d in m.diagnostics)


def test_an_existing_seed_fills_an_undercurrent_below_target():
    m = run_mechanics(world(), Intent("normal"), "")
    assert {u.id for u in m.snapshot.undercurrents} == {"uc-guild", "seed-caravan"}
    assert m.snapshot.seed_pool == [] and m.snapshot.seed_queue == []


def test_undercurrent_stage_is_forced_after_six_rounds_without_a_winning_roll():
    pol = WorldPolicy(stage_thresholds=[101, 101, 101], protected_owners=["Lia"])
    w = world(policy=pol, seeds=[], undercurrents=[Undercurrent("u1", "Guild", "t", "c"), Undercurrent("u2", "Cult", "t", "c")])
    stages = []
    for _ in range(7):
        m = run_mechanics(w, Intent("normal"), "")
        stages.append(m.snapshot.undercurrents[0].stage)
        w = committed(m.snapshot)
    assert stages == [1, 1, 1, 1, 1, 2, 2]
    assert m.dice[0].outcome == "held"


def test_undelivered_stage_three_invitation_blocks_further_advance():
    u = Undercurrent("u1", "Guild", "t", "c", "Meet me", stage=3, stage_rounds=10)
    w = world(undercurrents=[u, Undercurrent("u2", "Cult", "t", "c")], seeds=[])
    w = replace(w, pending_signal_demand=SignalDemand("u1", "Meet me", 0))
    m = run_mechanics(w, Intent("normal"), "")
    assert m.dice[0].outcome == "blocked" and m.dice[0].roll is None
    assert m.snapshot.undercurrents[0].stage == 3


def test_reaching_stage_three_creates_a_pending_signal_demand():
    pol = WorldPolicy(stage_thresholds=[0, 0, 0], protected_owners=["Lia"])
    u = Undercurrent("u1", "Guild", "t", "c", "Meet me at the well", stage=2)
    m = run_mechanics(world(policy=pol, undercurrents=[u, Undercurrent("u2", "Cult", "t", "c")], seeds=[]), Intent("normal"), "")
    assert m.snapshot.pending_signal_demand == SignalDemand("u1", "Meet me at the well", 0)


def test_at_most_two_undercurrent_clues_surface_per_turn():
    ucs = [Undercurrent(f"u{i}", "Guild", "t", f"clue {i}") for i in range(5)]
    m = run_mechanics(world(undercurrents=ucs, seeds=[]), Intent("normal"), "")
    assert len(m.surfacing) == 2


def test_the_agent_can_never_own_an_undercurrent_or_a_seed():
    with pytest.raises(WorldInvalid):
        world(undercurrents=[Undercurrent("u1", "lia", "t")])
    with pytest.raises(WorldInvalid):
        world(seeds=[Seed("s1", "  LIA ", "t")])


def test_same_snapshot_and_action_give_identical_rolls():
    a = run_mechanics(world(), Intent("normal"), "x")
    b = run_mechanics(world(), Intent("normal"), "x")
    assert msgspec.json.encode(a) == msgspec.json.encode(b)


def test_a_different_seed_gives_a_different_rng_state():
    assert world(seed=1).rng_state != world(seed=2).rng_state


def test_cue_to_a_background_makes_it_the_foreground_and_interrupts_the_current_event():
    m = run_mechanics(world(), Intent("cue", "bg-patrol"), "I go meet the patrol")
    assert m.snapshot.foreground.id == "bg-patrol"
    assert [e.kind for e in m.events[:2]] == ["event_interrupted", "event_started"]
