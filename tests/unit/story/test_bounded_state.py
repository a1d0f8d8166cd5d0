"""A long roleplay stays under ``maxStateBytes``: no text copies, quarantine out of the state,
compaction then a deliberate halt, and capped retries of failing Story stages."""

from __future__ import annotations

import msgspec

from story.coordinator.compact import compact
from story.coordinator.envelope import deserialize_state, serialize_state
from story.coordinator.turn import ADVANCE_RETRY_CAP, BeforeActorInput, finalize_turn
from tests.unit.story.builders import ctx
from tests.unit.story.test_coordinator import ADV, INIT, NORMAL, PERSONA, PLAN
from tests.unit.story.test_coordinator_turns import Chat, _opened

LONG = "我把铜钥匙递给莉娅，仔细描述徽记的每一道刻痕。" * 160  # ~4,000 characters


async def test_the_saved_state_references_the_users_text_instead_of_copying_it():
    chat = Chat()
    chat.model.enqueue("story_init.world", INIT).enqueue("story.prepare", NORMAL).enqueue("story.plan_cycle", PLAN)
    await chat.say("u1", LONG, 1, "Lia takes the key.")
    assert LONG[:40] not in chat.saved.decode()
    s = chat.state()
    assert s.pending_actor.action.message_id == "u1" and (s.pending_actor.action.start, s.pending_actor.action.end) == (0, len(LONG))
    assert s.pending_actor.projection.stage.honour_actions == [] and s.world.pending.user_text == ""
    assert len(chat.saved) < 12_000
    for i in range(2, 6):  # four more long turns: the evidence refs never carry the text either
        chat.model.enqueue("story.advance", ADV).enqueue("story.prepare", NORMAL)
        res = await chat.say(f"u{i}", LONG + str(i), 2 * i, "Lia listens. " * 150)
        assert res.write and LONG[:40] not in chat.saved.decode()
    assert len(chat.saved) < 12_000


async def test_adoption_gives_the_advance_the_user_action_re_read_from_its_message():
    chat = await _opened()
    chat.model.enqueue("story.advance", ADV).enqueue("story.prepare", NORMAL)
    await chat.say("u2", "I ask about the mark.", 3, "Lia frowns.")
    prompt = chat.model.calls("story.advance")[-1].messages[-1].content
    assert "User action: I hand Lia the key." in prompt


async def test_the_baseline_world_is_stored_as_changes_and_loads_back_exactly():
    chat = await _opened()
    s = chat.state()
    raw = msgspec.json.decode(chat.saved)
    assert raw["world"]["pending"] is None and set(raw["pending_turn"]["baseline_changes"]) < set(raw["world"])
    assert deserialize_state(serialize_state(s)) == s


async def test_over_the_cap_settled_history_is_compacted_before_giving_up():
    chat = await _opened()
    res = chat.results[-1]
    big = msgspec.structs.replace(res.candidate, narrative=msgspec.structs.replace(
        res.candidate.narrative, clock=msgspec.structs.replace(
            res.candidate.narrative.clock, completed_goals=[f"goal-{i:04}" for i in range(600)])))
    res.candidate = big
    size = len(finalize_turn(res, "a@1", "u1", "I hand Lia the key.", 60_000).payload)
    fin = finalize_turn(res, "a@1", "u1", "I hand Lia the key.", size - 100)
    assert fin.status == "waiting_for_acceptance" and "state_compacted" in {d.code for d in fin.diagnostics}
    assert len(deserialize_state(fin.payload).narrative.clock.completed_goals) == 32
    assert len(compact(big, 2).narrative.clock.completed_goals) == 0


async def test_a_state_that_cannot_fit_halts_with_state_too_large_and_costs_no_more_model_calls():
    chat = await _opened()
    res = chat.results[-1]
    fin = finalize_turn(res, "a@1", "u1", "I hand Lia the key.", len(chat.saved) - 50)
    assert fin.status == "state_too_large" and "state_too_large" in {d.code for d in fin.diagnostics}
    halted = deserialize_state(fin.payload)
    assert halted.status == "state_too_large" and halted.pending_actor is None
    calls = len(chat.model.history)
    chat.saved = fin.payload
    res = await chat.say("u2", "Hello?", 3, "Lia waits.")
    assert res.outcome == "no_story" and not res.write and len(chat.model.history) == calls
    assert "state_too_large" in {d.code for d in res.diagnostics}


async def test_world_settlement_is_retried_then_given_up_on_the_third_failure():
    chat = await _opened()
    h = list(chat.history)
    for failures in range(ADVANCE_RETRY_CAP - 1):
        chat.model.enqueue("story.advance", RuntimeError("down"))
        res = await chat.coord.before_actor(BeforeActorInput(ctx("u2:lia"), "lia", PERSONA, chat.saved, "u2", "next", 3, h,
                                                             prior_failures=failures))
        assert res.outcome == "advance_pending" and not res.write
    chat.model.enqueue("story.advance", RuntimeError("down")).enqueue("story.prepare", NORMAL)
    res = await chat.coord.before_actor(BeforeActorInput(ctx("u2:lia"), "lia", PERSONA, chat.saved, "u2", "next", 3, h,
                                                         prior_failures=ADVANCE_RETRY_CAP - 1))
    assert res.outcome == "prepared" and res.write and "advance_abandoned" in {d.code for d in res.diagnostics}
    [q] = res.candidate.quarantine
    assert [r.message_id for r in q.refs] == ["a@1"] and "failed 3 times" in q.reason
    assert res.candidate.world.round == 0 and res.candidate.accepted_message_id is None  # the reply was not adopted


async def test_initialisation_backs_off_after_three_failed_turns():
    chat = Chat()
    codes = []
    for failures in range(10):
        chat.model.enqueue("story_init.world", RuntimeError("down"), RuntimeError("down"))
        res = await chat.coord.before_actor(BeforeActorInput(ctx(f"u{failures}:lia"), "lia", PERSONA, None, f"u{failures}",
                                                             "hi", failures + 1, [], prior_failures=failures))
        codes.append("story_init_backoff" in {d.code for d in res.diagnostics})
    assert codes == [False, False, False, True, True, True, True, False, True, True]


async def test_a_released_record_is_queued_for_settlement_again_under_its_settle_key():
    from story.coordinator.envelope import EventRecord, EvidenceRef, QuarantineRecord
    from story.coordinator.events import requeue_quarantined

    chat = await _opened()
    s = msgspec.structs.replace(chat.state(), quarantined_ids=["ev-old#2"])
    rec = QuarantineRecord("ev-old#2", "3 settle attempts", [3, 5, 7], [EvidenceRef("a9", "h", source_position=2)])
    out = requeue_quarantined(s, rec)
    [queued] = [e for e in out.events if e.closed]
    assert (queued.event_id, queued.segment, queued.settle_key, queued.attempt_positions) == ("ev-old", 2, "ev-old#2", [])
    assert out.quarantined_ids == [] and requeue_quarantined(out, rec) == out
    assert EventRecord("x").settle_key == "x"
