"""The cross-reply step: after the primary replies are saved, the plan may let one agent briefly
answer another (one per round, ``cross_reply_rounds`` rounds); each cross reply is streamed and
saved like a primary one. A combined turn's round one takes the plan its reading made up front
(``ahead``) when it fits the replies kept, with no plan call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from app.turns.context import TurnContext
from app.turns.cross import (
    NO_PLAN, CrossReplyDecision, CrossReplyPlan, PlannedAhead, plan_constraints, plan_request, plan_validator,
)
from app.turns.drafts import DraftChannel
from app.turns.plugins import Emit, StageMetric
from app.turns.actor_prompt import actor_prompt
from app.turns.replies import Reply
from app.turns.stages import StageRun, model_configured, struct_stage

if TYPE_CHECKING:
    from app.turns.pipeline import TurnPipeline, TurnRun


async def run_cross(pipeline: TurnPipeline, ctx: TurnContext, run: TurnRun, emit: Emit, kept: list[Reply],
                    ahead: PlannedAhead | None = None) -> None:  # fmt: skip
    names = ctx.names()
    member_ids = list(names)
    said = list(kept)
    plan: CrossReplyPlan = NO_PLAN
    runs: list[StageRun[Any]] = []
    info = ctx.info
    for round_no in range(1, pipeline.settings.cross_reply_rounds + 1):
        if not model_configured(pipeline.model, "cross_reply"):
            break
        replied = [r.agent_id for r in said]
        planned = ahead.decision(replied) if ahead is not None and round_no == 1 else None
        if planned is not None:
            plan_run = StageRun(stage="cross_reply", value=planned.plan(), source="llm", ms=0.0, via="combined")
        else:
            request = plan_request(language=info.language, transcript=ctx.transcript,
                                   replies=[(r.agent_id, names[r.agent_id], r.text) for r in said],
                                   members=list(names.items()))  # fmt: skip
            plan_run = await struct_stage("cross_reply", pipeline.model, request, CrossReplyDecision, lambda: NO_PLAN,
                                          validate=plan_validator(member_ids, replied), post=CrossReplyDecision.plan,
                                          constraints=plan_constraints(member_ids, replied))  # fmt: skip
        runs.append(plan_run)
        if planned is None:  # a plan call ran
            run.add_usage(plan_run.usage)
            run.metrics.append(StageMetric.of("cross_reply", plan_run.ms, plan_run.usage, None, plan_run.source))
        plan = plan_run.value
        if not plan.should_reply:
            break
        agent = ctx.agents.rows[plan.from_agent_id]
        target = next(r for r in said if r.agent_id == plan.to_agent_id)
        # This turn's replies follow the user's message, the one answered last.
        this_turn = [(r.agent_id, r.text) for r in said if r is not target] + [(target.agent_id, target.text)]
        prompt = actor_prompt(pipeline.templates, agent, language=info.language, recent=info.recent_for(agent.id), names=names,
                              user_text=info.user_text, purpose="cross_reply", this_turn=this_turn,
                              cross_target=(target.agent_id, names[target.agent_id]))  # fmt: skip
        channel = DraftChannel(emit, info.turn_id, agent.id, held=False, on_first=lambda: run.mark("firstDelta"))
        reply = await pipeline.generate_reply(ctx, agent, prompt, channel, [r.text for r in said])
        reply.kind, reply.respond_to_agent_id = "cross", target.agent_id
        reply.cross_reason, reply.cross_round = plan.reason, round_no
        plan_record = {**msgspec.to_builtins(plan), "runs": [r.record() for r in runs]}
        await pipeline.finish_reply(ctx, run, emit, reply, [], None, extra_orch={"crossReplyPlan": plan_record})
        if reply.dropped:
            break
        said.append(reply)
    run.orchestration["crossReplyPlan"] = {**msgspec.to_builtins(plan), "runs": [r.record() for r in runs]}
