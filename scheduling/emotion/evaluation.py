"""Held-out figures of the offline emotion path, per source: shared by the trainer and the benchmark.

* ``detector_figures``: the 5-class primary emotion (the project's label scored as its
  ``FAMILY``) as macro-F1 over the classes the source has, accuracy, and the comfort-need flag as
  its own binary task (gold: sad, angry or anxious; predicted: ``needsComfort``), F1 of "needs
  comfort".
* ``plain_figures``: everyday chat lines (``sources.load_chat_lines``), all neutral: how many the
  offline path marks as needing comfort or de-escalation (false alarms).
* ``routing_figures``: who answers first in a four-agent group with no history (comforter,
  planner, joker, mediator, each with one capability tag at 0.95), through the whole offline
  path: ``fallback_emotion``, ``fallback_intent``, ``build_speaking_context``,
  ``decide_speakers`` with the default weights. Expected: comforter for sad and anxious text,
  mediator for angry, joker for happy; balanced accuracy is the mean of the four recalls.

Pure Python (no scikit-learn): the benchmark runs it in the server's environment.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from scheduling.context import build_speaking_context
from scheduling.emotion.classifier import FAMILY
from scheduling.emotion.model import UserEmotion
from scheduling.intent.fallback import fallback_intent
from scheduling.mentions import find_mentions
from scheduling.profiles import AgentCapabilities, AgentProfile
from scheduling.selection.decide import decide_speakers

COMFORT_GOLD = frozenset({"sad", "angry", "anxious"})

ROUTING_AGENTS = (
    AgentProfile(id="comforter", name="Comforter", capabilities=AgentCapabilities(comfort=0.95), display_order=0),
    AgentProfile(id="planner", name="Planner", capabilities=AgentCapabilities(analysis=0.95), display_order=1),
    AgentProfile(id="joker", name="Joker", capabilities=AgentCapabilities(playful=0.95), display_order=2),
    AgentProfile(id="mediator", name="Mediator", capabilities=AgentCapabilities(deescalation=0.95), display_order=3),
)
EXPECTED_FIRST = {"sad": "comforter", "anxious": "comforter", "angry": "mediator", "happy": "joker"}


def macro_f1(gold: list[str], predicted: list[str], labels: Iterable[str]) -> float:
    scores = []
    for label in labels:
        tp = sum(1 for g, p in zip(gold, predicted) if g == label and p == label)
        fp = sum(1 for g, p in zip(gold, predicted) if g != label and p == label)
        fn = sum(1 for g, p in zip(gold, predicted) if g == label and p != label)
        scores.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(scores) / len(scores) if scores else 0.0


def binary_f1(gold: list[bool], predicted: list[bool]) -> float:
    tp = sum(1 for g, p in zip(gold, predicted) if g and p)
    fp = sum(1 for g, p in zip(gold, predicted) if not g and p)
    fn = sum(1 for g, p in zip(gold, predicted) if g and not p)
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def detector_figures(
    items: list[tuple[str, str, str]], classes: Iterable[str], detect: Callable[[str], UserEmotion],
) -> dict[str, float]:
    """``items`` are ``(group, text, gold class)``."""
    emotions = [detect(text) for _, text, _ in items]
    gold = [label for _, _, label in items]
    predicted = [FAMILY[e.primary_emotion] for e in emotions]
    return {
        "n": len(items),
        "macro_f1": round(macro_f1(gold, predicted, list(classes)), 4),
        "accuracy": round(sum(g == p for g, p in zip(gold, predicted)) / max(1, len(gold)), 4),
        "comfort_f1": round(binary_f1([g in COMFORT_GOLD for g in gold], [e.needs_comfort for e in emotions]), 4),
    }


def plain_figures(items: list[tuple[str, str, str]], detect: Callable[[str], UserEmotion]) -> dict[str, float]:
    """Everyday lines (all gold neutral): ``false_alarm``, the share marked as needing comfort or
    de-escalation (the comforter or the mediator would answer a line that asked for neither), and
    ``neutral``, the share whose primary emotion is of the neutral family."""
    emotions = [detect(text) for _, text, _ in items]
    n = max(1, len(emotions))
    return {
        "n": len(items),
        "false_alarm": round(sum(e.needs_comfort or e.needs_deescalation for e in emotions) / n, 4),
        "neutral": round(sum(FAMILY[e.primary_emotion] == "neutral" for e in emotions) / n, 4),
    }


def held_out(source: Any, detect: Callable[[str], UserEmotion]) -> dict[str, float]:
    """A source's test-split figures: ``plain_figures`` for everyday lines, else ``detector_figures``."""
    if source.plain:
        return plain_figures(source.test, detect)
    return detector_figures(source.test, source.classes, detect)


def first_speaker(text: str, detect: Callable[[str], UserEmotion]) -> str:
    agents = list(ROUTING_AGENTS)
    emotion = detect(text)
    intent = fallback_intent(text, agents)
    context = build_speaking_context(agents, {}, [], emotion)
    decision = decide_speakers(agents=agents, context=context, intent=intent,
                               mentions=find_mentions(text, agents), emotion=emotion)
    return decision.selected_agent_ids[0]


def routing_figures(items: list[tuple[str, str, str]], detect: Callable[[str], UserEmotion]) -> dict[str, object]:
    """Per expected class: n and the share where the expected agent answers first; balanced
    accuracy over the four classes (neutral text is not scored: any first speaker is fine)."""
    hits: dict[str, list[int]] = {label: [0, 0] for label in EXPECTED_FIRST}
    for _, text, gold in items:
        if gold in EXPECTED_FIRST:
            hits[gold][1] += 1
            hits[gold][0] += first_speaker(text, detect) == EXPECTED_FIRST[gold]
    recall = {label: round(h / n, 4) for label, (h, n) in hits.items() if n}
    return {
        "balanced_accuracy": round(sum(recall.values()) / len(recall), 4) if recall else 0.0,
        "recall": recall,
        "n": {label: n for label, (_, n) in hits.items()},
    }



def routing_ceiling(scored: list[tuple[str, dict[str, float]]], steps: int = 10, span: float = 2.0) -> dict[str, object]:
    """The best routing balanced accuracy that one log-offset per agent reaches on ``scored``
    (``(gold class, class probabilities)``): each text goes to the agent whose classes have the
    highest summed probability (comforter: sad + anxious) times its offset, neutral is never chosen,
    and the offsets of the mediator and the joker against the comforter are searched on a grid of
    ``±span`` (natural log) in ``steps`` per unit over these very texts. Not a figure of the shipped
    path (that is ``routing_figures``) but the ceiling of every decision rule of the runtime's kind
    (a bias per class, then the argmax) on a model's probabilities: below the target, no bias or
    threshold reaches it and only a better detector can."""
    def log_share(p: dict[str, float], agent: str) -> float:  # the agent's classes, from EXPECTED_FIRST
        return math.log(max(1e-9, sum(p.get(c, 0.0) for c, a in EXPECTED_FIRST.items() if a == agent)))

    rows: list[tuple[str, float, float]] = []
    for gold, p in scored:
        if gold in EXPECTED_FIRST:
            comfort = log_share(p, "comforter")
            rows.append((gold, log_share(p, "mediator") - comfort, log_share(p, "joker") - comfort))
    counts = {label: sum(1 for g, _, _ in rows if g == label) for label in EXPECTED_FIRST}
    grid = [k / steps for k in range(-round(span * steps), round(span * steps) + 1)]
    best: tuple[float, float, float, dict[str, float]] = (0.0, 0.0, 0.0, {})
    for mediator in grid:
        for joker in grid:
            hits = dict.fromkeys(EXPECTED_FIRST, 0)
            for gold, angry, happy in rows:
                angry += mediator
                happy += joker
                agent = ("mediator" if angry > 0 and angry >= happy else "joker" if happy > 0 else "comforter")
                hits[gold] += agent == EXPECTED_FIRST[gold]
            recall = {label: hits[label] / n for label, n in counts.items() if n}
            score = sum(recall.values()) / len(recall) if recall else 0.0
            if score > best[0]:
                best = (score, mediator, joker, recall)
    return {
        "balanced_accuracy": round(best[0], 4),
        "recall": {label: round(r, 4) for label, r in best[3].items()},
        "log_offsets": {"mediator": best[1], "joker": best[2]},
    }
