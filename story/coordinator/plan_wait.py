"""When a failed plan cycle is tried again: after 1, 2, 4, then every 8 of the agent's Story turns.

The seed keeps ``need_plan`` after a plan that is still invalid after its repair, and leaves when
to call the tool to the host (the coordinator's "conditional plan"). A model that cannot plan
would otherwise pay for it on every turn: Qwen2.5-0.5B wrote one gist five times on every plan
of a four-turn run, 81 s a call with the repair, beside the actor in a server slot the actor's
reply needs. The beats are dealt without a plan meanwhile, as after any failed plan; a plan that
succeeds ends the wait.
"""

from __future__ import annotations

import msgspec

PLAN_WAIT_MAX_TURNS = 8


class PlanWait(msgspec.Struct, frozen=True):
    failures: int = 0  # plan cycles in a row that failed
    turns: int = 0  # the agent's Story turns still to pass before the next try
    turn_id: str | None = None  # the last turn that tried a plan or waited


def plan_due(wait: PlanWait, turn_id: str) -> tuple[bool, PlanWait]:
    """Whether this turn may call the plan tool, and the wait after asking. A turn asks once: a
    plan that failed in front of the actor is not tried again beside it."""
    if wait.turn_id == turn_id:
        return False, wait
    if wait.turns > 0:
        return False, msgspec.structs.replace(wait, turns=wait.turns - 1, turn_id=turn_id)
    return True, wait


def after_plan(wait: PlanWait, turn_id: str, outcome: str) -> PlanWait:
    """``outcome`` of the plan tool: ``failed`` doubles the wait, ``planned`` ends it."""
    if outcome == "failed":
        failures = wait.failures + 1
        return PlanWait(failures, min(2 ** (failures - 1), PLAN_WAIT_MAX_TURNS), turn_id)
    return PlanWait() if outcome == "planned" else wait
