"""Who decides a turn's speakers: the model, the scorer, or the scorer unless it is close.

``selection.mode`` of a conversation:

- ``llm``: the model selector is asked whenever ``llm_selection_needed`` says so;
- ``scorer``: the deterministic scorer alone decides, no selection model call ever;
- ``hybrid``: the scorer decides alone when its choice is clear: the mentions fill the turn, or
  its margin (``scorer_margin``) is at least ``hybrid_margin``; only a close call asks the model,
  and only for the slots that are close: the scorer's picks clear of everyone it left out
  (``settled``) speak first whatever the model says, and the model chooses the rest between the
  close members (``contenders``). A near-tie for the second speaker no longer lets a weak model
  replace a first speaker the scorer was sure of.

A weak model picks worse than the scorer where the scorer is sure, so ``hybrid`` keeps those turns
away from it. The default margin was chosen on the labelled lines of
``tests/perf/bench_reply_quality.py`` (its ``hybridSweep``: balanced accuracy of ``hybrid`` at each
margin, on the same model answers); the figures are in the README.

``selection_outcome`` says afterwards which path decided (``SelectionPath``) and, when the model
was asked and answered, whether its choice agreed with the scorer's own pick.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from scheduling.selection.decide import SelectionDecision

SelectionMode = Literal["llm", "scorer", "hybrid"]
SelectionPath = Literal["mention", "scorer", "llm", "fallback", "direct", "continue", "order"]
SELECTION_MODES: tuple[str, ...] = ("llm", "scorer", "hybrid")
SELECTION_PATHS: tuple[str, ...] = ("mention", "scorer", "llm", "fallback", "direct", "continue", "order")
DEFAULT_MODE: SelectionMode = "hybrid"
DEFAULT_HYBRID_MARGIN = 0.25
"""Chosen on bench_reply_quality's hybridSweep (README "Speaker selection mode"): on Qwen2.5-0.5B,
with the model's emotion and with the offline one, hybrid routed best at margins 0–0.25 (as well
as the scorer) and worse than both at 1.0, where the model was asked on half the lines; at 0.25
the model still breaks the near-ties (2 of 18 lines)."""


class SelectionPlan(msgspec.Struct, frozen=True, rename="camel"):
    """Decided before any selection model call: whether to ask it, and the scorer's own view."""

    mode: SelectionMode
    ask_model: bool
    scorer_margin: float | None
    scorer_pick: list[str]
    hybrid_margin: float | None = None  # the threshold used (hybrid only)
    contenders: list[str] = []  # hybrid, when asked: the only members the model may choose among
    settled: list[str] = []  # hybrid, when asked: the scorer's clear picks, who speak first whatever it says


class SelectionOutcome(msgspec.Struct, frozen=True, rename="camel"):
    """What the turn records: mode, path, the scorer's margin and pick, the model's agreement."""

    mode: SelectionMode
    path: SelectionPath
    scorer_margin: float | None
    scorer_pick: list[str]
    llm_agreed: bool | None  # None: the model was not asked, or gave no valid choice
    hybrid_margin: float | None = None


def scorer_margin(scorer: SelectionDecision) -> float | None:
    """How clear the scorer's own pick is: the score of the last candidate *it* chose (not a
    mentioned one) minus the best score of a candidate it left out. ``None`` when there was no
    choice to make: the mentions filled the turn, or nobody was left out. 0 is a tie."""
    chosen = [c.score for c in scorer.candidates if c.selected and c.selected_by == "fallback"]
    left_out = [c.score for c in scorer.candidates if not c.selected]
    if not chosen or not left_out:
        return None
    return round(min(chosen) - max(left_out), 6)


def model_needed(mode: SelectionMode, margin: float | None, *, llm_needed: bool, hybrid_margin: float) -> bool:
    """Whether to ask the selection model. ``llm_needed`` is ``llm_selection_needed`` (False when the
    mentions fill the turn); ``margin`` is ``scorer_margin`` of the scorer's decision."""
    if not llm_needed or mode == "scorer":
        return False
    if mode == "llm":
        return True
    return margin is not None and margin < hybrid_margin


def settled(scorer: SelectionDecision, hybrid_margin: float) -> list[str]:
    """The scorer's own picks (best first) whose score is at least ``hybrid_margin`` above every
    member it left out: on a ``hybrid`` close call they are not in question, only the later slots are."""
    left_out = [c.score for c in scorer.candidates if not c.selected]
    if not left_out:
        return []
    ranked = sorted(scorer.candidates, key=lambda c: c.rank)
    best_left = max(left_out)
    return [c.agent_id for c in ranked
            if c.selected and c.selected_by == "fallback" and c.score - best_left >= hybrid_margin]  # fmt: skip


def contenders(scorer: SelectionDecision, hybrid_margin: float, fixed: list[str] | None = None) -> list[str]:
    """The members a ``hybrid`` close call is between, best first: the scorer's picks that are not
    ``settled`` (the mentioned among them) and every member it left out whose score is
    within ``hybrid_margin`` of its last pick. The model breaks that tie and nothing else: a member
    the scorer ranks far below stays out of reach, so a weak model cannot misroute grossly where
    it is asked either. ``fixed``: ``settled(scorer, hybrid_margin)`` when the caller has it."""
    chosen = [c.score for c in scorer.candidates if c.selected and c.selected_by == "fallback"]
    if not chosen:
        return []
    floor = min(chosen) - hybrid_margin
    fixed = set(settled(scorer, hybrid_margin) if fixed is None else fixed)
    ranked = sorted(scorer.candidates, key=lambda c: c.rank)
    return [c.agent_id for c in ranked
            if c.agent_id not in fixed and (c.selected or c.score > floor)]  # fmt: skip


def plan_selection(mode: SelectionMode, scorer: SelectionDecision, *, llm_needed: bool,
                   hybrid_margin: float) -> SelectionPlan:  # fmt: skip
    """``scorer`` is ``decide_speakers`` without an LLM selection (the scorer alone)."""
    margin = scorer_margin(scorer)
    ask = model_needed(mode, margin, llm_needed=llm_needed, hybrid_margin=hybrid_margin)
    close_call = ask and mode == "hybrid"
    fixed = settled(scorer, hybrid_margin) if close_call else []
    return SelectionPlan(
        mode=mode, ask_model=ask, scorer_margin=margin, scorer_pick=list(scorer.selected_agent_ids),
        hybrid_margin=hybrid_margin if mode == "hybrid" else None,
        contenders=contenders(scorer, hybrid_margin, fixed) if close_call else [], settled=fixed,
    )  # fmt: skip


def selection_outcome(plan: SelectionPlan, decision: SelectionDecision, *, direct: bool = False,
                      continuation: bool = False) -> SelectionOutcome:  # fmt: skip
    """The path that decided ``decision``: ``direct`` / ``continue`` for those turns; else, when
    the model was asked, ``llm`` if it gave a valid choice and ``fallback`` if not (the scorer
    stood in); when it was not asked, ``mention`` if the mentions alone filled the turn, else
    ``scorer``. ``llm_agreed``: the model's valid choice led to the same speakers (any order) as
    the scorer's own pick."""
    answered = plan.ask_model and bool(decision.llm_selected_agent_ids)
    path: SelectionPath
    if direct:
        path = "direct"
    elif continuation:
        path = "continue"
    elif plan.ask_model:
        path = "llm" if answered else "fallback"
    else:
        path = "mention" if decision.decided_by == "mention" else "order" if decision.decided_by == "order" else "scorer"
    agreed = set(decision.selected_agent_ids) == set(plan.scorer_pick) if answered and not direct else None
    return SelectionOutcome(
        mode=plan.mode, path=path, scorer_margin=None if direct else plan.scorer_margin,
        scorer_pick=list(plan.scorer_pick), llm_agreed=agreed, hybrid_margin=plan.hybrid_margin,
    )  # fmt: skip
