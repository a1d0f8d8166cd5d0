"""Cross replies: after the primary replies, an LLM plan may let one agent briefly respond to
another's reply (at most one per round, ``cross_reply_rounds`` rounds). No model, no plan: the
fallback is to add nothing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from app.llm.port import ChatMessage, ModelRequest
from scheduling.combined import FollowUp


class CrossReplyPlan(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """The plan as the turn records it (``orchestration.crossReplyPlan``)."""

    should_reply: bool
    from_agent_id: str
    to_agent_id: str
    reason: str


class CrossReplyPair(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    from_agent_id: str
    to_agent_id: str


class CrossReplyDecision(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """What the model answers: a pair of ids or ``null``. Nesting keeps "no cross reply" free of
    placeholder ids, so the ids can be ``enum``s of real members."""

    reply: CrossReplyPair | None
    reason: str

    def plan(self) -> CrossReplyPlan:
        pair = self.reply
        return CrossReplyPlan(should_reply=pair is not None, from_agent_id=pair.from_agent_id if pair else "",
                              to_agent_id=pair.to_agent_id if pair else "", reason=self.reason)  # fmt: skip


REASON_MAX_CHARS = 200


def plan_constraints(member_ids: Sequence[str], replied_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The speaker is a member, the addressee one who replied this turn; with one reply so far
    the speaker cannot be that agent, so the enum says so."""
    replied = list(dict.fromkeys(replied_ids))
    speakers = [m for m in member_ids if not (len(replied) == 1 and m == replied[0])] or list(member_ids)
    return {"reply.fromAgentId": {"enum": speakers}, "reply.toAgentId": {"enum": replied},
            "reason": {"maxLength": REASON_MAX_CHARS}}  # fmt: skip


def plan_request(
    *, language: str, transcript: str, replies: Sequence[tuple[str, str, str]], members: Sequence[tuple[str, str]]
) -> ModelRequest:
    """``replies``: (agent id, name, text) said this turn; ``members``: (agent id, name)."""
    roster = "\n".join(f"- id={a} name={n}" for a, n in members)
    said = "\n".join(f"- {n} (id={a}): {t}" for a, n, t in replies)
    system = (
        "You coordinate an AI-companion group chat. Decide whether ONE companion should briefly respond to "
        "another companion's reply from this turn (agreement, a playful remark, a different view). Only do it when "
        "it adds something for the user; most turns need no cross reply. In reply, fromAgentId must be a member and "
        "must differ from toAgentId; toAgentId must be one of the companions who replied this turn. If no cross "
        f"reply is needed set reply to null. Write the reason (one short sentence) in {language}. "
        "Output only JSON matching the schema."
    )
    user = f"Members:\n{roster}\n\nRecent chat:\n{transcript or '(none)'}\n\nReplies this turn:\n{said}"
    return ModelRequest(
        messages=[ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)],
        purpose="cross_reply.plan",
        temperature=0.2,
    )


def plan_validator(member_ids: Sequence[str], replied_ids: Sequence[str]) -> Any:
    def validate(decision: CrossReplyDecision) -> list[str]:
        plan = decision.plan()
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


AHEAD_NONE_REASON = "no cross reply planned with the turn reading"


class PlannedAhead(msgspec.Struct, frozen=True):
    """Round one's plan as the combined call made it, before the replies (``crossReply``)."""

    pair: FollowUp | None

    def decision(self, replied_ids: Sequence[str]) -> CrossReplyDecision | None:
        """No pair: no cross reply. A pair whose addressee's reply was kept: that pair. Else
        ``None``: the plan call decides, as in a staged turn."""
        pair = self.pair
        if pair is None:
            return CrossReplyDecision(reply=None, reason=AHEAD_NONE_REASON)
        if pair.to_agent_id not in replied_ids:
            return None
        return CrossReplyDecision(reply=CrossReplyPair(pair.from_agent_id, pair.to_agent_id), reason=pair.reason)


NO_PLAN = CrossReplyPlan(should_reply=False, from_agent_id="", to_agent_id="", reason="no cross reply")
