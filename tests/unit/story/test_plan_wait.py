"""A failed plan cycle is tried again after 1, 2, 4, then every 8 of the agent's Story turns
(``story.coordinator.plan_wait``), not on every turn: the seed keeps ``need_plan`` and leaves when
to plan to the host."""

from __future__ import annotations

from story.coordinator.plan_wait import PLAN_WAIT_MAX_TURNS, PlanWait, after_plan, plan_due
from tests.unit.story.test_coordinator import ADV, INIT, NORMAL, PLAN
from tests.unit.story.test_coordinator_turns import Chat

BAD_PLAN = {"goals": PLAN["goals"][:1] * 5}  # one goal five times, as Qwen2.5-0.5B plans


def _tries(outcomes: list[str], turns: int) -> list[int]:
    """The turns (1-based) that call the plan tool, each answered by the next outcome."""
    wait, tried, answers = PlanWait(), [], iter(outcomes)
    for turn in range(1, turns + 1):
        due, wait = plan_due(wait, f"t{turn}")
        if due:
            tried.append(turn)
            wait = after_plan(wait, f"t{turn}", next(answers))
    return tried


def test_the_wait_doubles_after_each_failed_plan_up_to_eight_turns() -> None:
    assert _tries(["failed"] * 9, 40) == [1, 3, 6, 11, 20, 29, 38]
    assert PLAN_WAIT_MAX_TURNS == 8


def test_a_plan_that_succeeds_ends_the_wait() -> None:
    assert after_plan(PlanWait(3, 4, "t9"), "t10", "planned") == PlanWait()
    assert _tries(["failed", "planned", "failed", "failed"], 8) == [1, 3, 4, 6]


def test_a_turn_asks_once_and_a_skipped_plan_keeps_the_wait() -> None:
    wait = after_plan(PlanWait(), "t1", "failed")
    assert plan_due(wait, "t1") == (False, wait)  # in front failed: not again beside the actor
    assert after_plan(wait, "t2", "skipped") == wait


async def test_the_coordinator_waits_a_turn_after_a_failed_plan_and_then_plans_again() -> None:
    chat = Chat()
    chat.model.enqueue("story_init.world", INIT).enqueue("story.prepare", NORMAL)
    chat.model.enqueue("story.plan_cycle", BAD_PLAN, BAD_PLAN)  # the answer and its repair
    first = await chat.say("u1", "I hand Lia the key.", 1, "Lia takes the key and studies the mark.")
    assert "narrative_plan_cycle:failed" in first.tool_calls
    assert chat.state().narrative.need_plan and chat.state().plan_wait.turns == 1

    chat.model.enqueue("story.advance", ADV).enqueue("story.prepare", NORMAL)
    second = await chat.say("u2", "I ask about the mark.", 3, "Lia turns the key over.")
    assert "narrative_plan_cycle:waiting" in second.tool_calls
    assert "plan_waiting" in {d.code for d in second.diagnostics}
    assert len(chat.model.calls("story.plan_cycle")) == 2  # no call on the second turn
    assert chat.state().narrative.need_plan  # the seed: a failed plan is never assumed

    chat.model.enqueue("story.advance", ADV).enqueue("story.prepare", NORMAL).enqueue("story.plan_cycle", PLAN)
    third = await chat.say("u3", "Shall we go to the archive?", 5, "Lia nods.")
    assert "narrative_plan_cycle:planned" in third.tool_calls
    assert not chat.state().narrative.need_plan and chat.state().plan_wait == PlanWait()
