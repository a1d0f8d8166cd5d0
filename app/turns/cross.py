"""Cross replies: after the primary replies, an LLM plan may let one agent briefly respond to
another's reply (at most one per round, ``cross_reply_rounds`` rounds). No model, no plan: the
fallback is to add nothing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from app.llm.port import ChatMessage, ModelRequest, ResponseSchema
from app.llm.structured import strict_schema


class CrossReplyPlan(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    should_reply: bool
    from_agent_id: str
    to_agent_id: str
    reason: str


def plan_request(
    *, language: str, transcript: str, replies: Sequence[tuple[str, str, str]], members: Sequence[tuple[str, str]]
) -> ModelRequest:
    """``replies``: (agent id, name, text) said this turn; ``members``: (agent id, name)."""
    roster = "\n".join(f"- id={a} name={n}" for a, n in members)
    said = "\n".join(f"- {n} (id={a}): {t}" for a, n, t in replies)
    system = (
        "You coordinate an AI-companion group chat. Decide whether ONE companion should briefly respond to "
        "another companion's reply from this turn (agreement, a playful remark, a different view). Only do it when "
        "it adds something for the user; most turns need no cross reply. fromAgentId must be a member and must "
        "differ from toAgentId; toAgentId must be one of the companions who replied this turn. If no cross reply "
        f"is needed set shouldReply=false and leave the ids empty. Write the reason in {language}. "
        "Output only JSON matching the schema."
    )
    user = f"Members:\n{roster}\n\nRecent chat:\n{transcript or '(none)'}\n\nReplies this turn:\n{said}"
    return ModelRequest(
        messages=[ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)],
        purpose="cross_reply.plan",
        response_schema=ResponseSchema(name="cross_reply_plan", schema=strict_schema(CrossReplyPlan)),
        temperature=0.2,
        max_tokens=200,
    )


def plan_validator(member_ids: Sequence[str], replied_ids: Sequence[str]) -> Any:
    def validate(plan: CrossReplyPlan) -> list[str]:
        if not plan.should_reply:
            return []
        problems = []
        if plan.from_agent_id not in member_ids:
            problems.append(f"fromAgentId {plan.from_agent_id!r} is not a member")
        if plan.to_agent_id not in replied_ids:
            problems.append(f"toAgentId {plan.to_agent_id!r} did not reply this turn")
        if plan.from_agent_id == plan.to_agent_id:
            problems.append("fromAgentId and toAgentId must differ")
        return problems

    return validate


NO_PLAN = CrossReplyPlan(should_reply=False, from_agent_id="", to_agent_id="", reason="no cross reply")
