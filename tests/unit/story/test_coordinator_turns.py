"""Multi-turn coordinator behaviour: one settle per turn, quarantine end to end, Continue,
and byte-identical state for the same seed and inputs."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from story.coordinator.envelope import QUARANTINE_MAX_BYTES, deserialize_state
from story.coordinator.recovery import HistoryMessage
from story.coordinator.report import status_report
from story.coordinator.turn import CONTINUE_INSTRUCTION, BeforeActorInput, StoryCoordinator, finalize_turn
from story.tools.common import StoryModelConfig
from tests.unit.story.builders import cfg, ctx
from tests.unit.story.fakes import MemoryReader, ScriptedModel
from tests.unit.story.test_coordinator import ADV, INIT, NORMAL, PERSONA, PLAN

CUE = {"target_id": "bg-patrol", "companion_follows": True}
UNKNOWN = {"status": "unknown", "completed_goals": [], "line_progress": [], "emotion": None, "new_pursuit": ""}
SETTLED = dict(UNKNOWN, status="assessed")


class Chat:
    """A conversation with one agent: history, saved replies and the last saved state bytes."""

    def __init__(self, seed: int = 731) -> None:
        self.model, self.reader = ScriptedModel(), MemoryReader()
        self.coord = StoryCoordinator(cfg(self.model), self.reader)
        self.history: list[HistoryMessage] = []
        self.saved: bytes | None = None
        self.seed = seed
        self.results = []

    async def say(self, uid: str, text: str, pos: int, reply: str, *, continuation: bool = False, turn_id: str | None = None):
        inp = BeforeActorInput(ctx(turn_id or f"{uid}:lia"), "lia", PERSONA, self.saved, uid, text, pos,
                               list(self.history), self.seed, continuation=continuation)
        res = await self.coord.before_actor(inp)
        self.results.append(res)
        aid = f"a@{pos}"
        self.reader.put(aid, reply)
        if not continuation:
            self.reader.put(uid, text, None)  # the user's action is re-read from its message
            self.history.append(HistoryMessage(uid, "user", text))
        self.history.append(HistoryMessage(aid, "agent", reply, "lia"))
        if res.write:
            fin = finalize_turn(res, aid, uid, text)
            assert fin.status == "waiting_for_acceptance", fin.diagnostics
            self.saved = fin.payload
        return res

    def state(self):
        return deserialize_state(self.saved, "lia")


async def _open_and_interrupt(chat: Chat, settle_answer) -> None:
    """u1 opens the key event; u2 cues the patrol, which interrupts it (settled at position 3)."""
    chat.model.enqueue("story_init.world", INIT).enqueue("story.prepare", NORMAL).enqueue("story.plan_cycle", PLAN)
    await chat.say("u1", "I hand Lia the key.", 1, "Lia takes the key and studies the mark.")
    chat.model.enqueue("story.advance", ADV).enqueue("story.prepare", CUE).enqueue("story.settle", settle_answer)
    await chat.say("u2", "I go to meet the patrol.", 3, "The patrol marches in.")


async def test_an_unresolved_event_is_settled_once_per_turn():
    chat = Chat()
    await _open_and_interrupt(chat, UNKNOWN)
    assert len(chat.model.calls("story.settle")) == 1
    assert chat.results[-1].tool_calls.count("narrative_settle_event:unknown") == 1
    assert chat.state().events[0].attempt_positions == [3]
    chat.model.enqueue("story.advance", ADV).enqueue("story.prepare", NORMAL).enqueue("story.settle", UNKNOWN)
    res = await chat.say("u3", "I wait.", 5, "Nothing happens.")
    assert len(chat.model.calls("story.settle")) == 2 and res.tool_calls.count("narrative_settle_event:unknown") == 1
    closed = [e for e in chat.state().events if e.closed]
    assert [(e.event_id, e.attempt_positions) for e in closed] == [("ev-key", [3, 5])]
    assert "deal_paused_unresolved_event" in {d.code for d in res.diagnostics}


async def test_an_event_settled_at_its_interruption_costs_one_call_and_leaves_the_queue():
    chat = Chat()
    await _open_and_interrupt(chat, SETTLED)
    assert len(chat.model.calls("story.settle")) == 1
    assert not any(e.closed for e in chat.state().events)
    assert chat.state().narrative.clock.settled_event_ids == ["ev-key"]


async def test_three_attempts_at_distinct_positions_quarantine_the_event_in_the_same_write():
    chat = Chat()
    await _open_and_interrupt(chat, UNKNOWN)
    for uid, pos in (("u3", 5), ("u4", 7)):
        chat.model.enqueue("story.advance", ADV).enqueue("story.prepare", NORMAL).enqueue("story.settle", UNKNOWN)
        res = await chat.say(uid, "I wait.", pos, "Nothing happens.")
    assert len(chat.model.calls("story.settle")) == 3
    assert "story_event_quarantine" in {d.code for d in res.diagnostics}
    s = chat.state()
    assert not any(e.closed for e in s.events)
    # the record leaves the state: the saved bytes keep only its id, the host stores the record
    assert s.quarantine == [] and s.quarantined_ids == ["ev-key"]
    [q] = res.candidate.quarantine
    assert q.event_id == "ev-key" and q.attempt_positions == [3, 5, 7] and "distinct source positions" in q.reason
    assert [r.message_id for r in q.refs] == ["a@1"]
    assert len(msgspec.json.encode(q)) <= QUARANTINE_MAX_BYTES
    assert status_report(s, [q]).quarantine[0].event_id == "ev-key"
    # dropped from the queue: a later turn neither settles it again nor pauses dealing for it
    chat.model.enqueue("story.advance", ADV).enqueue("story.prepare", NORMAL)
    res = await chat.say("u5", "Onwards.", 9, "They walk on.")
    assert len(chat.model.calls("story.settle")) == 3
    assert "deal_paused_unresolved_event" not in {d.code for d in res.diagnostics}


async def test_twelve_source_positions_since_the_first_attempt_quarantine_the_event():
    chat = Chat()
    await _open_and_interrupt(chat, UNKNOWN)
    chat.model.enqueue("story.advance", ADV).enqueue("story.prepare", NORMAL).enqueue("story.settle", UNKNOWN)
    res = await chat.say("u3", "I wait.", 14, "Nothing happens.")  # 11 positions after the first attempt
    assert res.candidate.quarantine == [] and chat.state().quarantined_ids == []
    chat.model.enqueue("story.advance", ADV).enqueue("story.prepare", NORMAL).enqueue("story.settle", UNKNOWN)
    res = await chat.say("u4", "I wait.", 15, "Nothing happens.")  # 12 positions since the first (and a 3rd attempt)
    [q] = res.candidate.quarantine
    assert q.attempt_positions == [3, 14, 15]


async def test_twelve_positions_quarantine_on_the_second_attempt():
    chat = Chat()
    await _open_and_interrupt(chat, UNKNOWN)
    chat.model.enqueue("story.advance", ADV).enqueue("story.prepare", NORMAL).enqueue("story.settle", UNKNOWN)
    res = await chat.say("u3", "Much later.", 15, "Nothing happens.")
    [q] = res.candidate.quarantine
    assert q.attempt_positions == [3, 15] and "12 source positions" in q.reason
    assert not any(e.closed for e in chat.state().events)


async def test_lost_evidence_counts_as_an_attempt_without_a_model_call():
    chat = Chat()
    await _open_and_interrupt(chat, UNKNOWN)
    chat.reader.put("a@1", "edited away")  # the event's text changed after it was accepted
    chat.model.enqueue("story.advance", ADV).enqueue("story.prepare", NORMAL)
    res = await chat.say("u3", "I wait.", 5, "Nothing happens.")
    assert len(chat.model.calls("story.settle")) == 1
    assert "event_evidence_unavailable" in {d.code for d in res.diagnostics}
    assert [e.attempt_positions for e in chat.state().events if e.closed] == [[3, 5]]


# --- Continue ----------------------------------------------------------------------------------
async def _opened() -> Chat:
    chat = Chat()
    chat.model.enqueue("story_init.world", INIT).enqueue("story.prepare", NORMAL).enqueue("story.plan_cycle", PLAN)
    await chat.say("u1", "I hand Lia the key.", 1, "Lia takes the key. This is the old archive mark.")
    return chat


async def test_continue_is_a_synthetic_action_keyed_by_the_message_position():
    chat = await _opened()
    # Continue twice: no new user message, the same host turn id, the message position advances
    for pos, text in ((3, "continue"), (4, "")):
        chat.model.enqueue("story.advance", ADV)
        res = await chat.say("u1", text, pos, f"Lia goes on ({pos}).", continuation=True)
        assert res.outcome == "prepared" and res.write, res.diagnostics
        assert "pov_advance_world:committed" in res.tool_calls
    assert len(chat.model.calls("story.prepare")) == 1  # the synthetic action is never classified
    assert "continue_default_instruction" in {d.code for d in res.diagnostics}
    assert res.projection.stage.honour_actions == [CONTINUE_INSTRUCTION]
    s = chat.state()
    assert s.world.round == 2 and s.source_position == 4
    assert s.pending_actor.action_kind == "continue" and s.pending_actor.user_message_id == "u1"
    assert s.world.pending.turn_id == "u1:lia#continue@4"
    assert [(r.message_id, r.action_kind) for r in s.events[0].refs] == [("a@1", "user"), ("a@3", "continue")]


async def test_a_continued_reply_is_adopted_and_settled_apart_from_real_user_actions():
    chat = await _opened()
    chat.model.enqueue("story.advance", ADV)
    await chat.say("u1", "continue", 3, "Lia goes on.", continuation=True)
    chat.model.enqueue("story.advance", ADV).enqueue("story.prepare", CUE).enqueue("story.settle", SETTLED)
    res = await chat.say("u2", "I go to meet the patrol.", 5, "The patrol marches in.")
    assert res.outcome == "prepared" and "pov_advance_world:committed" in res.tool_calls
    assert chat.state().accepted_message_id == "a@3"
    prompt = chat.model.calls("story.settle")[0].messages[-1].content
    actions = prompt.split("User actions:")[1].split("Accepted text")[0]
    assert "I hand Lia the key." in actions and "continue" not in actions and "I go to meet" not in actions
    assert "This is the old archive mark." in prompt and "Lia goes on." in prompt


async def test_continue_with_the_same_turn_id_is_not_stuck_on_the_committed_turn():
    chat = await _opened()
    chat.model.enqueue("story.advance", ADV)
    res = await chat.say("u1", "go on", 3, "More.", continuation=True, turn_id="u1:lia")
    assert res.outcome == "prepared" and chat.state().world.last_committed_turn_id == "u1:lia"


# --- determinism -------------------------------------------------------------------------------
async def _scripted_run(seed: int) -> list[bytes]:
    chat = Chat(seed)
    chat.model.enqueue("story_init.world", INIT).enqueue("story.prepare", NORMAL).enqueue("story.plan_cycle", PLAN)
    await chat.say("u1", "I hand Lia the key.", 1, "Lia takes the key.")
    out = [chat.saved]
    script = [(NORMAL, None), (NORMAL, None), (CUE, SETTLED), (NORMAL, None), (NORMAL, None), (NORMAL, None)]
    for i, (prep, settle) in enumerate(script, start=2):
        chat.model.enqueue("story.advance", ADV).enqueue("story.prepare", prep)
        if settle is not None:
            chat.model.enqueue("story.settle", settle)
        await chat.say(f"u{i}", f"action {i}", 2 * i - 1, f"reply {i}")
        out.append(chat.saved)
    return out


async def test_same_seed_and_inputs_give_byte_identical_state_over_several_turns():
    a, b = await _scripted_run(731), await _scripted_run(731)
    assert len(a) == 7 and len(set(a)) == 7  # every turn wrote a new state
    assert a == b
    other = await _scripted_run(732)
    assert [deserialize_state(x).world.rng_state for x in other] != [deserialize_state(x).world.rng_state for x in a]


# --- cancellation and timeouts through the coordinator -----------------------------------------
async def test_cancelling_a_turn_mid_settle_leaves_nothing_half_applied_and_the_retry_is_clean():
    chat = Chat()
    chat.model.enqueue("story_init.world", INIT).enqueue("story.prepare", NORMAL).enqueue("story.plan_cycle", PLAN)
    await chat.say("u1", "I hand Lia the key.", 1, "Lia takes the key.")
    saved, hist = chat.saved, list(chat.history)
    started = asyncio.Event()

    async def hang():
        started.set()
        await asyncio.sleep(30)

    chat.model.enqueue("story.advance", ADV).enqueue("story.prepare", CUE).enqueue("story.settle", hang())
    inp = BeforeActorInput(ctx("u2:lia"), "lia", PERSONA, saved, "u2", "I go to meet the patrol.", 3, hist)
    task = asyncio.create_task(chat.coord.before_actor(inp))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert chat.saved == saved  # nothing to write: the caller never got a result

    def fresh():
        return ScriptedModel().enqueue("story.advance", ADV).enqueue("story.prepare", CUE).enqueue("story.settle", SETTLED)

    m1, m2 = fresh(), fresh()
    r1 = await StoryCoordinator(cfg(m1), chat.reader).before_actor(inp)
    r2 = await StoryCoordinator(cfg(m2), chat.reader).before_actor(inp)
    assert r1.outcome == "prepared" and finalize_turn(r1, "a2", "u2", inp.user_text) == finalize_turn(r2, "a2", "u2", inp.user_text)


async def test_a_slow_advance_hits_the_timeout_and_the_turn_is_advance_pending():
    chat = Chat()
    chat.coord = StoryCoordinator(StoryModelConfig(chat.model, "story-cfg", 0.05), chat.reader)
    chat.model.enqueue("story_init.world", INIT).enqueue("story.prepare", NORMAL).enqueue("story.plan_cycle", PLAN)
    await chat.say("u1", "I hand Lia the key.", 1, "Lia takes the key.")
    saved = chat.saved
    chat.model.enqueue("story.advance", asyncio.sleep(30))
    res = await chat.say("u2", "Next.", 3, "More.")
    assert res.outcome == "advance_pending" and not res.write and res.guidance is None
    assert "model_timeout" in {d.code for d in res.diagnostics} and chat.saved == saved


async def test_end_rounds_after_a_settled_end_are_settled_as_a_later_stretch_not_a_duplicate():
    from story.coordinator.envelope import EventRecord, EvidenceRef
    from story.coordinator.events import add_evidence, close_event
    from tests.unit.story.test_coordinator import state as base_state
    from msgspec.structs import replace as rep
    s = base_state()
    s = rep(s, narrative=rep(s.narrative, clock=rep(s.narrative.clock, settled_event_ids=["ev-key"])))
    s = add_evidence(s, "ev-key", EvidenceRef("a5", "h", "u", 9))
    assert s.events[0].settle_key == "ev-key#1"
    s = add_evidence(close_event(s, "ev-key", False), "ev-key", EvidenceRef("a6", "h", "u", 11))
    assert [e.settle_key for e in s.events] == ["ev-key#1", "ev-key#2"] and isinstance(s.events[0], EventRecord)
