"""Deferred settlement (issue 10: at most one Story call in front of the actor): with
``deferred`` the prepare is the only call before the actor, the settle pass and the plan cycle
run in ``settle_beside`` and land in the same candidate the non-deferred turn would write; and a
scope can be initialised ahead of its agent's first turn."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from story.coordinator.envelope import deserialize_state
from story.coordinator.recovery import HistoryMessage
from story.coordinator.turn import BeforeActorInput, finalize_turn
from tests.unit.story.builders import ctx
from tests.unit.story.test_coordinator import ADV, INIT, NORMAL, PERSONA, PLAN
from tests.unit.story.test_coordinator_turns import CUE, SETTLED, Chat

DONE_G0 = dict(SETTLED, completed_goals=[{"goal_id": "g0", "evidence": "studies the mark"}])


async def _second_turn(chat: Chat, *, deferred: bool):
    """Turn 1 as usual; turn 2 cues the patrol, which interrupts the key event."""
    chat.model.enqueue("story_init.world", INIT).enqueue("story.prepare", NORMAL).enqueue("story.plan_cycle", PLAN)
    await chat.say("u1", "I hand Lia the key.", 1, "Lia takes the key and studies the mark.")
    chat.model.enqueue("story.advance", ADV).enqueue("story.prepare", CUE).enqueue("story.settle", DONE_G0)
    inp = BeforeActorInput(ctx("u2:lia"), "lia", PERSONA, chat.saved, "u2", "I go to meet the patrol.", 3,
                           list(chat.history), chat.seed, deferred=deferred)  # fmt: skip
    chat.reader.put("u2", "I go to meet the patrol.", None)
    chat.reader.put("a@3", "The patrol marches in.")
    return inp, await chat.coord.before_actor(inp)


async def test_deferred_prepare_is_the_only_call_before_the_actor_and_the_settle_lands_beside_it():
    chat = Chat()
    inp, res = await _second_turn(chat, deferred=True)
    assert chat.model.calls("story.settle") == [] and res.beside is not None
    assert "narrative_settle_event:settled" not in res.tool_calls
    assert "deal_paused_unresolved_event" in {d.code for d in res.diagnostics}  # settled after this deal
    await chat.coord.settle_beside(inp, res)
    assert len(chat.model.calls("story.settle")) == 1 and res.beside is None
    assert res.tool_calls[-1] == "narrative_settle_event:settled"
    state = deserialize_state(finalize_turn(res, "a@3", "u2", inp.user_text).payload, "lia")
    assert not [e for e in state.events if e.closed]  # the interrupted event left the queue
    assert {g.id for g in state.narrative.cycle.pending if g.done} == {"g0"}


async def test_deferred_and_in_front_settle_the_same_events_with_the_same_outcome():
    front, beside = Chat(), Chat()
    _, r1 = await _second_turn(front, deferred=False)
    inp, r2 = await _second_turn(beside, deferred=True)
    await beside.coord.settle_beside(inp, r2)
    s1, s2 = r1.candidate, r2.candidate
    assert [e.settle_key for e in s1.events] == [e.settle_key for e in s2.events]
    assert s1.narrative.cycle.pending == s2.narrative.cycle.pending
    assert s1.narrative.clock.settled_event_ids == s2.narrative.clock.settled_event_ids
    assert s1.world == s2.world


async def test_a_cancelled_settle_beside_leaves_the_result_as_it_was():
    chat = Chat()
    inp, res = await _second_turn(chat, deferred=True)
    before = msgspec.json.encode(res)
    chat.model.queues["story.settle"].clear()
    chat.model.enqueue("story.settle", asyncio.Event().wait())  # the settle hangs until cancelled
    task = asyncio.ensure_future(chat.coord.settle_beside(inp, res))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert msgspec.json.encode(res) == before  # the events stay queued for the next turn


async def test_a_turn_with_nothing_to_settle_or_plan_has_nothing_beside():
    chat = Chat()
    chat.model.enqueue("story_init.world", INIT).enqueue("story.prepare", NORMAL).enqueue("story.plan_cycle", PLAN)
    inp = BeforeActorInput(ctx("u1:lia"), "lia", PERSONA, None, "u1", "I hand Lia the key.", 1, [], deferred=True)
    res = await chat.coord.before_actor(inp)
    # A scope's first turn plans in front (its first beat has a goal); nothing is left beside.
    assert res.tool_calls == ["story_init:ok", "pov_prepare_turn", "narrative_plan_cycle:planned", "narrative_deal_beat"]
    assert res.beside is None


async def test_initialized_ahead_the_first_turn_only_prepares():
    chat = Chat()
    chat.model.enqueue("story_init.world", INIT).enqueue("story.plan_cycle", PLAN)
    history = [HistoryMessage("u0", "user", "Hello everyone.")]
    ahead = await chat.coord.initialize_ahead(
        BeforeActorInput(ctx("u0:lia"), "lia", PERSONA, None, "u0", "ignored", 1, history))
    assert ahead.payload is not None and ahead.tool_calls == ["story_init:ok", "narrative_plan_cycle:planned"]
    assert "ignored" not in chat.model.calls("story_init.world")[0].messages[-1].content
    state = deserialize_state(ahead.payload, "lia")
    assert state.pending_actor is None and not state.narrative.need_plan and state.source_position == 1
    chat.model.enqueue("story.prepare", NORMAL)
    res = await chat.coord.before_actor(BeforeActorInput(
        ctx("u1:lia"), "lia", PERSONA, ahead.payload, "u1", "I hand Lia the key.", 3, history, deferred=True))
    assert res.tool_calls == ["pov_prepare_turn", "narrative_deal_beat"] and res.write and res.guidance is not None


async def test_a_failed_initialization_ahead_leaves_the_first_turn_to_initialise():
    chat = Chat()
    chat.model.enqueue("story_init.world", "not json").enqueue("story_init.world", "not json")
    ahead = await chat.coord.initialize_ahead(BeforeActorInput(ctx("u0:lia"), "lia", PERSONA, None, "u0", "", 1, []))
    assert ahead.payload is None and ahead.tool_calls == ["story_init:failed"]
