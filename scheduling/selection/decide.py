"""One decision per turn: mentions first, then the LLM's valid choice, then the scorer.

The app runs the model calls; this function only decides, from values, and explains itself
(``SelectionDecision`` is what goes into message metadata and the decision rows).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import msgspec

from scheduling.context import GroupSpeakingContext
from scheduling.emotion.model import UserEmotion
from scheduling.intent.model import UserIntent
from scheduling.profiles import AgentProfile
from scheduling.selection.order import ReplyOrder, eligible, order_pick
from scheduling.selection.scorer import (
    CandidateScore, Chattiness, SelectedBy, is_addressed_to_several, plan_reply_count, score_candidates,
)
from scheduling.selection.validation import SpeakerSelection, normalize_selection, validate_selection
from scheduling.selection.weights import DEFAULT_WEIGHTS, ScoringWeights


class SelectionDecision(msgspec.Struct, rename="camel"):
    candidates: list[CandidateScore]
    selected_agent_ids: list[str]
    selected_by: dict[str, SelectedBy]
    reason: str
    weights_version: str
    reply_target: int
    decided_by: SelectedBy = "fallback"
    llm_selected_agent_ids: list[str] = []
    llm_problems: list[str] = []


def llm_selection_needed(
    intent: UserIntent, emotion: UserEmotion, mentions: Sequence[str], *, reply_limit: int,
    candidate_count: int, chattiness: Chattiness = "balanced",
) -> bool:
    """False when the mentions already fill the turn, so the app can skip the selector call."""
    target = plan_reply_count(intent, emotion, mention_count=len(mentions), reply_limit=reply_limit,
                              candidate_count=candidate_count, chattiness=chattiness)
    return len(mentions) < target or (not mentions and candidate_count > 1)


def decide_speakers(
    *,
    agents: Sequence[AgentProfile],
    context: GroupSpeakingContext,
    intent: UserIntent,
    mentions: Sequence[str],
    weights: ScoringWeights = DEFAULT_WEIGHTS,
    llm_selection: SpeakerSelection | None = None,
    reply_limit: int = 2,
    chattiness: Chattiness = "balanced",
    emotion: UserEmotion | None = None,
    muted: Collection[str] = (),
    reply_order: ReplyOrder = "natural",
    recent_speakers: Sequence[str] = (),
    resting: Collection[str] = (),
    settled: Sequence[str] = (),
) -> SelectionDecision:
    """Who replies, in order, and by which rule.

    1. Mentioned agents (members only, mention order, up to ``reply_limit``) — ``mention``; then
       ``settled`` ones (a ``hybrid`` close call's clear scorer picks, ``scheduling.selection.mode``)
       — ``fallback``, the scorer's.
    2. Remaining slots from ``llm_selection`` if it passes ``validate_selection`` — ``llm``.
       Without mentions the LLM decides the count itself (≤ ``reply_limit``; 1 when quiet and
       not addressed to several); with mentions it only fills up to the planned count.
    3. Otherwise the scorer's top candidates up to ``plan_reply_count`` — ``fallback``.

    ``decidedBy`` is the last rule that added an agent (fallback > llm > order > mention);
    ``llmSelected`` per candidate keeps the LLM's opinion even where a mention overrode it.

    ``muted`` members are chosen only when mentioned (the model may not pick one: its choice is
    then invalid); ``resting`` ones (auto mode: who spoke last) are left out like muted ones
    unless nobody else could speak (never the same speaker twice in a row, unless alone); ``reply_order`` other than ``natural`` fills the remaining slots by its rule
    (``scheduling.selection.order``) from ``recent_speakers`` (oldest first), ``selectedBy:
    "order"``, and ``manual`` leaves them empty.
    """
    emotion = emotion or context.user_emotion
    ids = [a.id for a in agents]
    rest = [r for r in dict.fromkeys(resting) if r in ids and r not in muted]
    if rest and not eligible(ids, {*muted, *rest}):
        rest = []  # alone: the only one who may speak speaks again
    muted_note = [m for m in ids if m in muted]
    muted = {*muted, *rest}
    free = eligible(ids, muted)
    mentioned = [m for m in dict.fromkeys(mentions) if m in ids][: max(1, reply_limit)]
    ranked = score_candidates(agents, context, mentioned, weights, emotion)
    target = plan_reply_count(intent, emotion, mention_count=len(mentioned), reply_limit=reply_limit,
                              candidate_count=len(set(free) | set(mentioned)), chattiness=chattiness)
    if reply_order == "manual":
        target = len(mentioned)
    chosen: dict[str, SelectedBy] = {m: "mention" for m in mentioned}
    notes = [f"named by the user: {', '.join(mentioned)}"] if mentioned else []
    fixed = [] if reply_order != "natural" else [
        s for s in dict.fromkeys(settled) if s in free and s not in chosen][: max(0, target - len(chosen))]
    if fixed:
        chosen.update({s: "fallback" for s in fixed})
        notes.append(f"clear scorer pick {weights.version}: {', '.join(fixed)}")
    if muted_note:
        notes.append(f"muted (only when named): {', '.join(muted_note)}")
    if rest:
        notes.append(f"spoke last, not again at once: {', '.join(rest)}")

    problems: list[str] = []
    llm_ids: list[str] = []
    if llm_selection is not None:
        problems = validate_selection(llm_selection, free, max(1, reply_limit))
        if not problems:
            llm_ids = normalize_selection(llm_selection).selected_agent_ids

    if reply_order == "manual":
        notes.append("reply order manual: only named members reply (or one asked to speak)")
    if len(chosen) < target and reply_order in ("list", "pooled"):
        picks = order_pick(reply_order, ids, recent_speakers, muted, [c.agent_id for c in ranked], target - len(chosen),
                           taken=chosen)  # fmt: skip
        for agent_id in picks:
            chosen[agent_id] = "order"
        notes.append(f"reply order {reply_order}: {', '.join(picks) or 'nobody eligible'}")
    elif len(chosen) < target:
        if llm_ids:
            cap = target if mentioned or fixed else (
                1 if chattiness == "quiet" and not is_addressed_to_several(intent, 0) else max(1, reply_limit))
            for agent_id in llm_ids:
                if len(chosen) >= cap:
                    break
                chosen.setdefault(agent_id, "llm")
            notes.append(f"llm: {llm_selection.reason.strip()}" if llm_selection.reason.strip() else "llm selection")
        else:
            for candidate in ranked:
                if len(chosen) >= target:
                    break
                if candidate.agent_id not in muted:
                    chosen.setdefault(candidate.agent_id, "fallback")
            why = f"llm selection rejected ({'; '.join(problems)}); " if problems else ""
            notes.append(f"{why}fallback scorer {weights.version}: top {target} of {len(ids)} by score")

    for candidate in ranked:
        candidate.llm_selected = (candidate.agent_id in llm_ids) if llm_ids else None
        if candidate.agent_id in chosen:
            candidate.selected = True
            candidate.selected_by = chosen[candidate.agent_id]
    sources = {by for agent_id, by in chosen.items() if agent_id not in fixed} or set(chosen.values())
    decided_by: SelectedBy = "fallback" if "fallback" in sources else "llm" if "llm" in sources else (
        "order" if "order" in sources or (reply_order == "manual" and not sources) else
        "mention" if sources else "fallback")
    return SelectionDecision(
        candidates=ranked,
        selected_agent_ids=list(chosen),
        selected_by=chosen,
        reason="; ".join(notes)[:1000],
        weights_version=weights.version,
        reply_target=target,
        decided_by=decided_by,
        llm_selected_agent_ids=llm_ids,
        llm_problems=problems,
    )


def certain_speakers(agents: Sequence[AgentProfile], mentions: Sequence[str], *, reply_limit: int,
                     direct: bool) -> list[str]:
    """Who replies whatever the model says: the one agent of a direct conversation, else the
    mentioned members (mention order, up to ``reply_limit``). The app starts their replies at once."""
    ids = [a.id for a in agents]
    if direct:
        return ids[:1]
    return [m for m in dict.fromkeys(mentions) if m in ids][: max(1, reply_limit)]


def decide_direct(decision: SelectionDecision) -> SelectionDecision:
    """A direct conversation has one listener: the scored decision, with its one agent selected by
    ``direct`` (the candidates keep their features and score for the decision rows)."""
    first = decision.candidates[0].agent_id if decision.candidates else None
    ranked = sorted(decision.candidates, key=lambda c: c.rank)
    agent_id = ranked[0].agent_id if ranked else first
    for c in decision.candidates:
        c.selected, c.selected_by = True, "direct"
    return msgspec.structs.replace(
        decision, selected_agent_ids=[agent_id] if agent_id else [], selected_by={agent_id: "direct"} if agent_id else {},
        reason="direct conversation", decided_by="direct",
    )
