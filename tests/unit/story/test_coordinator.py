import subprocess
import sys

import msgspec
import pytest
from msgspec.structs import replace

from story.coordinator.envelope import (
    EventRecord, EvidenceRef, StateAgentMismatch, StoryState, content_hash, deserialize_state, quarantine_record,
    serialize_state,
)
from story.coordinator.initializer import PersonaSource, compile_source
from story.coordinator.recovery import HistoryMessage, decide_start, record_attempt, should_quarantine
from story.coordinator.turn import BeforeActorInput, StoryCoordinator, finalize_turn
from tests.unit.story.builders import cfg, ctx, narrative, world
from tests.unit.story.fakes import MemoryReader, ScriptedModel

PERSONA = PersonaSource("Lia", "Lia guards the city gate and registers visitors.", "You stand at the gate.")
INIT = {
    "foreground": {"id": "ev-key", "title": "Lia checks the copper key", "summary": "at the gate"},
    "backgrounds": [{"id": "bg-patrol", "title": "The patrol returns", "summary": "boots", "kind": "conflict", "countdown": 3}],
    "undercurrents": [{"id": "uc-guild", "owner": "Ash Guild", "title": "hunt", "clue": "a watcher", "invitation": "meet"}],
    "seeds": [{"id": "seed-c", "owner": "Caravan", "title": "news", "clue": "dust", "invitation": "join"}],
    "main": {"theme": "archive", "direction": "find what the key opens", "experience": "mystery"},
    "sub": {"theme": "trust", "direction": "earn Lia's help", "experience": "warmth"},
    "emotion_label": "curious",
}
PLAN = {"goals": [{"id": f"g{i}", "serves": "sub" if i == 4 else "main", "angle": "reveal", "gist": f"goal {i}",
                   "reward": "", "core": i == 0, "priority": 5 - i, "prerequisites": []} for i in range(5)]}
NORMAL = {"target_id": None, "companion_follows": None}
ADV = {"invitation_delivered": False, "shown_injection_ids": [], "offstage_results": [], "new_backgrounds": [],
       "new_seeds": [], "next_foreground": None, "choices": []}


def state():
    return StoryState("lia", world(), narrative())


def test_state_bytes_are_deterministic_and_round_trip():
    assert serialize_state(state()) == serialize_state(state())
    assert deserialize_state(serialize_state(state()), "lia") == state()


def test_state_over_max_bytes_fails_instead_of_being_trimmed():
    from story.coordinator.envelope import StateTooLarge
    with pytest.raises(StateTooLarge):
        serialize_state(state(), max_bytes=100)


def test_state_of_another_agent_is_refused():
    with pytest.raises(StateAgentMismatch):
        deserialize_state(serialize_state(state()), "kai")


def test_event_is_quarantined_after_three_distinct_positions_or_twelve_positions():
    rec = EventRecord("ev", [EvidenceRef("a1", "h", "u", 1)])
    for pos in (2, 2, 3):
        rec = record_attempt(rec, pos)
    assert should_quarantine(rec, 3) is None
    assert should_quarantine(record_attempt(rec, 4), 4) is not None
    assert should_quarantine(record_attempt(EventRecord("ev"), 5), 5 + 12) is not None
    assert should_quarantine(record_attempt(EventRecord("ev"), 5), 5 + 11) is None


def test_quarantine_record_stays_under_64_kib():
    refs = [EvidenceRef(f"m{i}", "h" * 64, "x" * 500, i) for i in range(400)]
    q = quarantine_record(EventRecord("ev", refs), "r", [])
    assert len(msgspec.json.encode(q)) <= 64 * 1024


def test_initializer_material_is_cut_to_the_seed_limits():
    history = [HistoryMessage(f"m{i}", "user", "x" * 5000) for i in range(30)]
    src = compile_source(PersonaSource("Lia", "d" * 20000, "o" * 5000), history, "now")
    assert src.count("d") >= 12000 and "d" * 12001 not in src and "o" * 3001 not in src
    assert src.count("user: ") == 18 and "x" * 3001 not in src


def test_pending_actor_is_adopted_only_when_message_owner_and_user_hash_match():
    from story.coordinator.envelope import PendingActor
    s = replace(state(), status="waiting_for_acceptance", source_position=1,
                pending_actor=PendingActor("a1", "u1", content_hash("hi"), None))  # type: ignore[arg-type]
    hist = [HistoryMessage("u1", "user", "hi"), HistoryMessage("a1", "agent", "reply", "lia")]
    assert decide_start(s, hist, "lia", 2) == "adopt"
    assert decide_start(s, [HistoryMessage("u1", "user", "edited"), hist[1]], "lia", 2) == "reinitialize"
    assert decide_start(s, [hist[0], HistoryMessage("a1", "agent", "reply", "kai")], "lia", 2) == "reinitialize"
    assert decide_start(s, hist[:1], "lia", 2) == "reinitialize"
    assert decide_start(s, hist, "lia", 0) == "read_only"


def test_story_imports_with_litestar_sqlalchemy_openai_and_app_blocked():
    code = (
        "import sys\n"
        "for m in ('litestar','sqlalchemy','openai','app'): sys.modules[m] = None\n"
        "import story, story.ports, story.coordinator.turn, story.tools.narrative_tools, story.tools.prepare_turn\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=".")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


async def turn(coord, model, reader, saved, user_id, text, pos, history, agent_msg, agent_text):
    res = await coord.before_actor(BeforeActorInput(ctx(f"turn-{user_id}"), "lia", PERSONA, saved, user_id, text, pos, history))
    assert res.outcome == "prepared", res.diagnostics
    reader.put(agent_msg, agent_text)
    fin = finalize_turn(res, agent_msg, user_id, text)
    return res, fin


async def test_three_turn_walkthrough_adopts_saved_prose_and_keeps_user_input_out_of_settlement():
    m, reader = ScriptedModel(), MemoryReader()
    coord = StoryCoordinator(cfg(m), reader)
    m.enqueue("story_init.world", INIT).enqueue("story.prepare", NORMAL).enqueue("story.plan_cycle", PLAN)
    u1 = "I hand Lia the key but stay outside."
    r1, f1 = await turn(coord, m, reader, None, "u1", u1, 1, [], "a1", "Lia takes the key.")
    assert f1.status == "waiting_for_acceptance" and r1.guidance.content.startswith("[CURRENT STORY STAGE]")
    s1 = deserialize_state(f1.payload, "lia")
    assert s1.pending_actor.message_id == "a1" and b"Lia takes the key" not in f1.payload

    reader.put("a1", "Lia only glances at the key. This is the old archive mark.")  # edited through the API
    u2 = "Never mind, give me the key back."
    m.enqueue("story.advance", ADV).enqueue("story.prepare", NORMAL)
    h2 = [HistoryMessage("u1", "user", u1), HistoryMessage("a1", "agent", "edited", "lia")]
    r2, f2 = await turn(coord, m, reader, f1.payload, "u2", u2, 3, h2, "a2", "Lia hands the key back.")
    adv_prompt = m.calls("story.advance")[0].messages[-1].content
    assert "Lia only glances at the key" in adv_prompt and u2 not in adv_prompt
    s2 = deserialize_state(f2.payload, "lia")
    assert s2.accepted_message_id == "a1" and s2.pending_actor.message_id == "a2"
    assert s2.events[0].refs[0].message_id == "a1"

    # u3 cues the patrol: the key event is interrupted and settled over a1 + a2 only
    m.enqueue("story.advance", ADV).enqueue("story.prepare", {"target_id": "bg-patrol", "companion_follows": True})
    m.enqueue("story.settle", {"status": "assessed", "emotion": None, "new_pursuit": "", "line_progress": [],
                               "completed_goals": [{"goal_id": "g0", "evidence": "This is the old archive mark"},
                                                   {"goal_id": "g1", "evidence": "Lia opens the archive"}]})
    u3 = "I go to meet the patrol."
    h3 = h2 + [HistoryMessage("u2", "user", u2), HistoryMessage("a2", "agent", "x", "lia")]
    r3, f3 = await turn(coord, m, reader, f2.payload, "u3", u3, 5, h3, "a3", "The patrol arrives.")
    settle_prompt = m.calls("story.settle")[0].messages[-1].content
    assert "Lia hands the key back" in settle_prompt and u3 not in settle_prompt
    s3 = deserialize_state(f3.payload, "lia")
    done = {g.id for g in s3.narrative.cycle.pending if g.done}
    assert done == {"g0"} and s3.world.foreground.id == "bg-patrol"


async def test_init_failing_twice_gives_no_guidance_and_nothing_to_write():
    m, reader = ScriptedModel().enqueue("story_init.world", "x", "y"), MemoryReader()
    res = await StoryCoordinator(cfg(m), reader).before_actor(
        BeforeActorInput(ctx(), "lia", PERSONA, None, "u1", "hi", 1, []))
    assert res.outcome == "no_story" and res.guidance is None and not res.write
    assert finalize_turn(res, "a1", "u1", "hi").payload is None


async def test_init_proposal_owning_an_undercurrent_by_the_agent_is_not_taken():
    bad = dict(INIT, undercurrents=[dict(INIT["undercurrents"][0], owner="Lia")])
    m = ScriptedModel().enqueue("story_init.world", bad).enqueue("story.prepare", NORMAL).enqueue("story.plan_cycle", PLAN)
    res = await StoryCoordinator(cfg(m), MemoryReader()).before_actor(
        BeforeActorInput(ctx(), "lia", PERSONA, None, "u1", "hi", 1, []))
    assert res.outcome == "prepared" and len(m.calls("story_init.world")) == 1
    assert res.write and all(t.owner != "Lia" for t in res.candidate.world.undercurrents)


async def test_advance_pending_keeps_the_saved_state_and_gives_no_new_guidance():
    m, reader = ScriptedModel(), MemoryReader()
    coord = StoryCoordinator(cfg(m), reader)
    m.enqueue("story_init.world", INIT).enqueue("story.prepare", NORMAL).enqueue("story.plan_cycle", PLAN)
    _, f1 = await turn(coord, m, reader, None, "u1", "hello", 1, [], "a1", "Lia nods.")
    m.enqueue("story.advance", RuntimeError("down"))
    h = [HistoryMessage("u1", "user", "hello"), HistoryMessage("a1", "agent", "Lia nods.", "lia")]
    res = await coord.before_actor(BeforeActorInput(ctx("t2"), "lia", PERSONA, f1.payload, "u2", "next", 3, h))
    assert res.outcome == "advance_pending" and res.guidance is None and not res.write


async def test_same_seed_and_inputs_give_byte_identical_state():
    async def run():
        m, reader = ScriptedModel(), MemoryReader()
        m.enqueue("story_init.world", INIT).enqueue("story.prepare", NORMAL).enqueue("story.plan_cycle", PLAN)
        return (await turn(StoryCoordinator(cfg(m), reader), m, reader, None, "u1", "hi", 1, [], "a1", "x"))[1].payload
    assert await run() == await run()


def test_the_stage_texts_are_the_worlds_and_the_plots_words_never_the_users_action():
    from story.coordinator.envelope import Projection
    from story.coordinator.turn import stage_texts
    from story.narrative.deal import BeatPacket, Bias, DealtGoal, EmotionGuide
    from story.world.stage import StageEvent, StoryStage

    stage = StoryStage(StageEvent("ev", "核验钥匙", "城门口", "start"), ["我把钥匙递给莉娅"], ["巡逻队的脚步声"],
                       ["戴兜帽的人"], invitation="井边见")  # fmt: skip
    beat = BeatPacket(DealtGoal("g0", "main", "reveal", "让旧徽记得到辨认", "", True),
                      EmotionGuide(True, 0.0, 0.3, 0.5, "好奇", "set up"), "查明钥匙", "查明钥匙", Bias())  # fmt: skip
    assert stage_texts(Projection(stage, beat)) == ["核验钥匙", "城门口", "巡逻队的脚步声", "戴兜帽的人", "井边见", "查明钥匙",
                                                    "让旧徽记得到辨认"]  # fmt: skip
