"""Pure generator of realistic synthetic history: turns, messages, decision rows, stage metrics,
quality events and suggestions, as tuples in the column order of ``COLUMNS``.

Realistic enough to exercise every query and the tuner: emotions drive needs, needs × agent
capabilities drive the match features, recent speakers get penalised, mentions override, the LLM
picks by a *known* preference (``LLM_TRUE_WEIGHTS`` plus Gumbel noise, i.e. a conditional logit)
so a fit on ``--label llm`` should recover it, and the LLM has outage days where the fallback
scorer takes over. Seeded ``random.Random`` only: the same seed gives the same history.

Every synthetic conversation runs in ``selection.mode`` llm (the model is asked on every group
turn without a mention), so the recorded path is the decision (mention | llm | fallback | direct),
the scorer's margin is the one of its own pick and ``llm_agreed`` compares the LLM's pick with it;
these add no random draw, so a seed gives the same history as before they were recorded.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import deque
from datetime import datetime, timedelta

import msgspec

from scheduling.selection.features import FEATURE_NAMES
from scheduling.selection.weights import DEFAULT_WEIGHTS

LLM_TRUE_WEIGHTS = {
    "relationship_score": 2.0, "freshness_score": 1.2, "recent_reply_count": -0.6, "spoke_last_turn": -1.2,
    "comfort_match": 3.0, "advice_match": 1.8, "deescalation_match": 2.6, "playful_match": 1.0, "mentioned": 0.0,
}
EMOTIONS = (("neutral", 30), ("happy", 14), ("sad", 12), ("anxious", 9), ("angry", 6), ("lonely", 6),
            ("stressed", 8), ("confused", 6), ("romantic", 3), ("playful", 6))
STAGES = (("new_connection", 0.25), ("warming_up", 0.52), ("trusted", 0.78), ("close_bond", 0.95))
ARCHETYPES = ("comfort", "analysis", "deescalation", "playful")
NAMES = ("Mira", "Theo", "Juno", "Kai", "Lena", "Oskar", "Rina", "Sol")
QUALITY_REASONS = ("too_long", "off_persona", "repeats_other_agent", "language_mismatch", "unsafe")
STAGE_MS = {"intent": 350, "emotion": 420, "select": 600, "actor": 1800, "story": 250, "cross_reply": 1500,
            "quality": 300, "auto_reply": 900}

COLUMNS = {
    "turns": ("id", "conversation_id", "owner_id", "user_message_id", "status", "idempotency_key", "intent",
              "emotion", "timings", "usage", "created_at", "completed_at"),
    "messages": ("id", "conversation_id", "turn_id", "seq", "role", "agent_id", "content", "content_hash",
                 "reply_kind", "respond_to_agent_id", "metadata_json", "created_at"),
    "speaker_decisions": ("turn_id", "conversation_id", "conversation_kind", "agent_id", "created_at", "display_order",
                          "selected", "selected_by", "decided_by", "rank", "score", "weights_version",
                          *FEATURE_NAMES, "relationship_stage", "llm_selected", "primary_emotion", "intensity",
                          "needs_comfort", "needs_advice", "needs_deescalation", "emotion_source", "synthetic",
                          "selection_mode", "selection_path", "scorer_margin", "llm_agreed"),
    "turn_stage_metrics": ("turn_id", "conversation_id", "stage", "agent_id", "ms", "input_tokens", "output_tokens",
                           "estimated", "outcome", "created_at", "synthetic"),
    "quality_events": ("turn_id", "conversation_id", "agent_id", "reply_kind", "reason", "action", "created_at",
                       "synthetic"),
    "suggestions": ("id", "conversation_id", "anchor_message_id", "turn_id", "status", "options", "fallback",
                    "attempts", "usage", "model", "problems", "synthetic", "created_at", "updated_at"),
}


class SynthAgent(msgspec.Struct):
    id: str
    name: str
    capabilities: dict[str, float]
    display_order: int


class SynthConversation(msgspec.Struct):
    id: str
    kind: str
    agents: list[SynthAgent]
    stages: dict[str, tuple[str, float]]
    seq: int = 0
    recent: deque = msgspec.field(default_factory=lambda: deque(maxlen=12))
    last_speakers: tuple[str, ...] = ()
    last_at: datetime | None = None


def make_agents(rng: random.Random, count: int, run: str) -> list[SynthAgent]:
    agents = []
    for i in range(count):
        main = ARCHETYPES[i % len(ARCHETYPES)]
        caps = {c: round(0.9 if c == main else rng.uniform(0.0, 0.45), 2) for c in ARCHETYPES}
        agents.append(SynthAgent(f"syn{run}a{i:03d}", f"{NAMES[i % len(NAMES)]} (synthetic {i + 1})", caps, i))
    return agents


def make_conversation(rng: random.Random, cid: str, kind: str, members: list[SynthAgent]) -> SynthConversation:
    stages = {a.id: STAGES[min(3, int(rng.random() ** 1.3 * 4))] for a in members}
    return SynthConversation(cid, kind, members, stages)


def _emotion(rng: random.Random, outage: bool) -> dict:
    primary = rng.choices([e for e, _ in EMOTIONS], [w for _, w in EMOTIONS])[0]
    comfort = primary in ("sad", "lonely") or (primary in ("anxious", "stressed", "angry") and rng.random() < 0.6)
    advice = primary == "confused" or (primary in ("anxious", "stressed") and rng.random() < 0.5) or (
        primary == "neutral" and rng.random() < 0.15)
    return {
        "primary": primary, "intensity": min(1.0, round(rng.betavariate(2, 3) + (0.3 if primary == "angry" else 0.0), 3)),
        "comfort": comfort, "advice": advice, "deesc": primary == "angry" or (primary == "stressed" and rng.random() < 0.2),
        "energy_high": primary in ("happy", "playful") and rng.random() < 0.5,
        "source": "fallback" if rng.random() < (0.7 if outage else 0.03) else "llm",
    }


def _features(conv: SynthConversation, agent: SynthAgent, emo: dict, mentioned: bool, rng: random.Random) -> list:
    calm = emo["comfort"] or emo["deesc"]
    playful = 1.0 if emo["primary"] == "playful" else 0.5 if (emo["primary"] == "happy" or emo["energy_high"]) else 0.0
    needs = {"comfort": (0.5 if emo["deesc"] else 1.0) if emo["comfort"] else 0.0, "analysis": 1.0 if emo["advice"] else 0.0,
             "deescalation": 1.0 if emo["deesc"] else 0.0, "playful": 0.0 if calm else playful}
    caps = agent.capabilities
    return [
        conv.stages[agent.id][1], round(rng.random() ** 0.6, 3), float(sum(1 for s in conv.recent if s == agent.id)),
        1.0 if agent.id in conv.last_speakers else 0.0, needs["comfort"] * caps["comfort"],
        needs["analysis"] * caps["analysis"], needs["deescalation"] * caps["deescalation"],
        needs["playful"] * caps["playful"], 1.0 if mentioned else 0.0,
    ]


def _dot(weights: dict[str, float], feats: list[float]) -> float:
    return sum(weights[n] * v for n, v in zip(FEATURE_NAMES, feats, strict=True))


def _id(rng: random.Random) -> str:
    return f"{rng.getrandbits(128):032x}"


def generate_turn(rng: random.Random, conv: SynthConversation, at: datetime, outage: bool, out: dict[str, list]) -> None:
    """Append one turn's rows to ``out`` (table name → list of tuples)."""
    tid, umid, emo = _id(rng), _id(rng), _emotion(rng, outage)
    conv.seq += 1
    out["messages"].append((umid, conv.id, tid, conv.seq, "user", None, f"synthetic user message {conv.seq}",
                            hashlib.sha256(umid.encode()).hexdigest(), None, None, {"synthetic": True}, at))
    group = conv.kind == "group"
    mention = rng.choice(conv.agents).id if group and rng.random() < 0.07 else None
    cands = [(a, _features(conv, a, emo, a.id == mention, rng)) for a in conv.agents]
    scored = sorted(((a, f, round(_dot(DEFAULT_WEIGHTS.weights, f), 6)) for a, f in cands), key=lambda x: (-x[2], x[0].display_order))
    relay = emo["comfort"] and emo["intensity"] >= 0.8 and len(scored) > 1
    llm_pick: set[str] | None = None
    if not group:
        decided, chosen = "direct", [scored[0][0].id]
    elif mention:
        decided, chosen = "mention", [mention]
    elif not outage and rng.random() > 0.06:
        utility = sorted(((_dot(LLM_TRUE_WEIGHTS, f) - math.log(-math.log(rng.random() or 1e-12)), a.id) for a, f, _ in scored), reverse=True)
        chosen = [aid for _, aid in utility[: 2 if relay else 1]]
        decided, llm_pick = "llm", set(chosen)
    else:
        decided, chosen = "fallback", [a.id for a, _, _ in scored[: 2 if relay else 1]]
    dat = at + timedelta(milliseconds=5)
    own = 2 if relay else 1  # the scorer's own pick, without a mention (what ``scorer_margin`` measures)
    margin = round(scored[own - 1][2] - scored[own][2], 6) if group and not mention and len(scored) > own else None
    agreed = None if llm_pick is None else llm_pick == {a.id for a, _, _ in scored[:own]}
    for rank, (a, f, score) in enumerate(scored, start=1):
        sel = a.id in chosen
        out["speaker_decisions"].append((
            tid, conv.id, conv.kind, a.id, dat, a.display_order, sel, decided if sel else None, decided, rank, score,
            DEFAULT_WEIGHTS.version, *f, conv.stages[a.id][0], None if llm_pick is None else a.id in llm_pick,
            emo["primary"], emo["intensity"], emo["comfort"], emo["advice"], emo["deesc"], emo["source"], True,
            "llm", decided, None if decided == "direct" else margin, agreed,
        ))
    _replies(rng, conv, tid, at, chosen, decided, emo, outage, out)
    conv.recent.extend(chosen)
    conv.last_speakers, conv.last_at = tuple(chosen), at
    intent = {"kind": "emotional_share" if emo["comfort"] else "chit_chat", "synthetic": True}
    emotion = {"primaryEmotion": emo["primary"], "intensity": emo["intensity"], "source": emo["source"]}
    out["turns"].append((tid, conv.id, "synthetic", umid, "completed", None, intent, emotion, {}, {}, at,
                         at + timedelta(seconds=3)))


def _metric(out: dict, tid: str, conv: SynthConversation, stage: str, agent: str | None, rng: random.Random,
            at: datetime, outcome: str = "ok") -> float:
    ms = round(rng.lognormvariate(math.log(STAGE_MS[stage]), 0.45), 1) if stage in STAGE_MS else 0.0
    tokens = (0, 0) if stage == "story" else (rng.randint(300, 1500), rng.randint(20, 300))
    out["turn_stage_metrics"].append((tid, conv.id, stage, agent, ms, *tokens, rng.random() < 0.05, outcome, at, True))
    return ms


def _replies(rng: random.Random, conv: SynthConversation, tid: str, at: datetime, chosen: list[str], decided: str,
             emo: dict, outage: bool, out: dict[str, list]) -> None:
    total = _metric(out, tid, conv, "intent", None, rng, at)
    total += _metric(out, tid, conv, "emotion", None, rng, at, "fallback" if emo["source"] == "fallback" else "ok")
    if conv.kind == "group":
        total += _metric(out, tid, conv, "select", None, rng, at, "fallback" if decided == "fallback" else "ok")
    anchor = None
    for i, aid in enumerate(chosen):
        total += _metric(out, tid, conv, "story", aid, rng, at) + _metric(out, tid, conv, "actor", aid, rng, at)
        if rng.random() < 0.03:
            dropped = rng.random() < 0.3
            out["quality_events"].append((tid, conv.id, aid, "primary", rng.choice(QUALITY_REASONS),
                                          "dropped" if dropped else "regenerated", at, True))
            if dropped:
                continue
        conv.seq += 1
        mid = _id(rng)
        anchor = anchor or mid
        out["messages"].append((mid, conv.id, tid, conv.seq, "agent", aid, f"synthetic reply {conv.seq}",
                                hashlib.sha256(mid.encode()).hexdigest(), "primary", None, {"synthetic": True},
                                at + timedelta(milliseconds=1000 + 10 * i)))
    others = [a.id for a in conv.agents if a.id not in chosen]
    if chosen and others and rng.random() < 0.12:
        total += _metric(out, tid, conv, "cross_reply", None, rng, at)
        conv.seq += 1
        mid, aid = _id(rng), rng.choice(others)
        out["messages"].append((mid, conv.id, tid, conv.seq, "agent", aid, f"synthetic cross reply {conv.seq}",
                                hashlib.sha256(mid.encode()).hexdigest(), "cross", chosen[0], {"synthetic": True},
                                at + timedelta(milliseconds=2000)))
        conv.recent.append(aid)
    total += _metric(out, tid, conv, "quality", None, rng, at)
    if anchor:
        total += _metric(out, tid, conv, "auto_reply", None, rng, at)
        r = rng.random()
        status = "ready" if r < 0.9 else "failed" if r < 0.93 else "cleared" if r < 0.995 else "generating"
        attempts = 1 if rng.random() < 0.85 else rng.randint(2, 3)
        fallback = status == "ready" and rng.random() < 0.04
        out["suggestions"].append((_id(rng), conv.id, anchor, tid, status, ["ok", "tell me more", "thanks"], fallback,
                                   attempts, {"inputTokens": 400, "outputTokens": 60}, "synthetic-model", [], True,
                                   at + timedelta(seconds=2), at + timedelta(seconds=3)))
    out["turn_stage_metrics"].append((tid, conv.id, "total", None, round(total, 1), 0, 0, False, "ok", at, True))
