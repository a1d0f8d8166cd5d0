"""Benchmark: replies a user would keep, and who answers, on a model reached over HTTP.

The four-member group (a comforter, a planner, a joker, a mediator: ``tests/realmodel/group.py``)
in Chinese and English, through the real app on SQLite, against the schema-following simulator
(``--target sim``), Qwen2.5-Coder-0.5B-Instruct (``--target qwen``, Chinese and English) or
SmolLM2-135M (``--target smollm2``, English only: it speaks no Chinese, so its run is the English
lines) on ``llama-server`` (``tests/realmodel/provision.py``). Prints JSON:

- ``stages``: per model stage (the request's purpose), valid on the first answer / repaired /
  failed (the caller fell back);
- ``replies``: replies kept and dropped, each check's hits on first drafts (a hit is regenerated
  once, then dropped) and turns that ended with a kept reply;
- ``savedRecheck``: the echo / repeat / prompt-wording / speaks-for-others checks run again on
  every saved reply (``saved_reply_problems``): each must be 0;
- ``routing``: on the lines with a clear expected first speaker, balanced accuracy (mean recall
  over comforter, planner, joker, mediator) per ``selection.mode``. The turns run in ``llm`` mode,
  so every line has the model's choice; each turn also records the scorer's own pick and margin,
  which is exactly what ``scorer`` would pick and what ``hybrid`` needs to decide (scorer when the
  margin is at least ``hybridMargin``, the model otherwise): the three modes are compared on the
  same understanding and the same model answers. ``hybridSweep`` shows other margins;
- ``suggestions``: per turn, ready / failed, and the mean pairwise similarity of ready options
  (``story.auto_reply.text.similarity``; near-duplicates are >= 0.8);
- ``story``: ``--story`` turns in a Chinese group (one reply a turn) with the Story on and the
  timeouts raised as the README tells CPU users: how many reach ``waiting_for_acceptance``.

    python tests/perf/bench_reply_quality.py [--target sim|qwen|smollm2] [--zh 12] [--en 6] [--story 4]
        [--orchestration staged|combined] [--emotion-source model|offline]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from litestar.testing import AsyncTestClient  # noqa: E402

from app.db.migrate import upgrade  # noqa: E402
from app.llm.gateway import ModelGateway  # noqa: E402
from app.main import create_app  # noqa: E402
from scheduling.selection.mode import DEFAULT_HYBRID_MARGIN  # noqa: E402
from story.auto_reply.text import similarity  # noqa: E402
from tests.integration.conftest import ADMIN, ALICE, make_settings  # noqa: E402
from tests.perf.bench_wire_stages import Ledger, summarize  # noqa: E402
from tests.realmodel.group import LINES, ROLES, agent_body, persona_text, saved_reply_problems  # noqa: E402

SWEEP = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, float("inf"))


async def _post(client: AsyncTestClient, path: str, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    resp = await client.post(path, json=body, headers=headers)
    if resp.status_code >= 300:
        raise RuntimeError(f"{path}: {resp.status_code} {resp.text}")
    return resp.json()


async def _suggestions(client: AsyncTestClient, conv_id: str, turn_id: str, timeout_s: float) -> dict[str, Any] | None:
    """The turn's suggestion record once it has settled (generated after the turn, in the background)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        resp = await client.get(f"/v1/conversations/{conv_id}/suggestions/latest", headers=ALICE)
        if resp.status_code == 200:
            body = resp.json()
            if body.get("turnId") == turn_id and body.get("status") not in ("generating", None):
                return body
        await asyncio.sleep(0.5)
    return None


class Group:
    def __init__(self, client: AsyncTestClient, language: str, settings: dict[str, Any]) -> None:
        self.client, self.language, self.settings = client, language, settings
        self.role_of: dict[str, str] = {}
        self.names: dict[str, str] = {}
        self.conv_id = ""

    async def create(self) -> Group:
        for role in ROLES:
            agent = await _post(self.client, "/v1/agents", agent_body(self.language, role), ADMIN)
            self.role_of[agent["id"]], self.names[agent["id"]] = role, agent["name"]
        body = {"kind": "group", "agentIds": list(self.role_of), "settings": {"language": self.language, **self.settings}}
        self.conv_id = (await _post(self.client, "/v1/conversations", body, ALICE))["id"]
        return self

    async def turn(self, text: str) -> dict[str, Any]:
        return await _post(self.client, f"/v1/conversations/{self.conv_id}/turns", {"content": text}, ALICE)

    async def messages(self) -> list[dict[str, Any]]:
        resp = await self.client.get(f"/v1/conversations/{self.conv_id}/messages",
                                     params={"order": "asc", "limit": 200}, headers=ALICE)  # fmt: skip
        return resp.json()["items"]


def _first(ids: list[str], role_of: dict[str, str]) -> str | None:
    return role_of.get(ids[0]) if ids else None


def routing_row(turn: dict[str, Any], role_of: dict[str, str], expected: str) -> dict[str, Any]:
    """What each mode would have put first on this turn (see the module docstring). ``scores``
    (each member's score) and ``floor`` (the scorer's last pick's) give ``hybrid``'s contenders at
    any margin; ``llmAll`` is the model's whole choice, best first."""
    sel = turn["orchestration"]["selection"]
    scores = {role_of.get(c["agentId"]): c["score"] for c in sel.get("candidates") or []}
    picked = [scores[role_of.get(a)] for a in sel.get("scorerPick") or [] if role_of.get(a) in scores]
    return {"expected": expected, "margin": sel.get("scorerMargin"), "asked": sel.get("path") in ("llm", "fallback"),
            "llm": _first(sel["selectedAgentIds"], role_of), "scorer": _first(sel.get("scorerPick") or [], role_of),
            "llmAll": [role_of.get(a) for a in sel["selectedAgentIds"]],
            "scorerAll": [role_of.get(a) for a in sel.get("scorerPick") or []],
            "scores": scores, "floor": min(picked) if picked else None}  # fmt: skip


def pick(row: dict[str, Any], mode: str, margin: float) -> str | None:
    """``hybrid`` asks the model only for the close slots (``scheduling.selection.mode``): a first
    pick of the scorer's that is ``settled`` (``margin`` above everyone left out) stays first;
    otherwise the first speaker is the model's first choice among the contenders; when the model
    (asked among everyone, in ``llm`` mode) chose none of them, the restricted call's answer is
    unknown and the scorer's pick is counted (as the app does when the model's answer is refused)."""
    if mode == "llm":
        return row["llm"]
    if mode == "scorer" or not row["asked"]:
        return row["scorer"]
    if row["margin"] is None or row["margin"] >= margin:
        return row["scorer"]
    if row.get("floor") is None:
        return row["llm"]
    left_out = [score for r, score in row["scores"].items() if r not in row["scorerAll"]]
    first = row["scores"].get(row["scorer"])
    if left_out and first is not None and first - max(left_out) >= margin:
        return row["scorer"]  # settled: the model only fills the later slots
    close = set(row["scorerAll"]) | {r for r, score in row["scores"].items() if score > row["floor"] - margin}
    return next((r for r in row["llmAll"] if r in close), row["scorer"])


def balanced_accuracy(rows: list[dict[str, Any]], mode: str, margin: float = DEFAULT_HYBRID_MARGIN) -> float | None:
    recalls = []
    for role in ROLES:
        mine = [r for r in rows if r["expected"] == role]
        if mine:
            recalls.append(sum(pick(r, mode, margin) == role for r in mine) / len(mine))
    return round(sum(recalls) / len(recalls), 3) if recalls else None


def quality_events(db: Path) -> list[tuple[str, str, str, str, str]]:
    with contextlib.closing(sqlite3.connect(db)) as con:
        return con.execute("SELECT turn_id, agent_id, reply_kind, reason, action FROM quality_events").fetchall()


def mean_pairwise(options: list[str], names: list[str]) -> float:
    pairs = list(itertools.combinations(options, 2))
    return statistics.fmean(similarity(a, b, ignore=names) for a, b in pairs) if pairs else 0.0


async def run(base_url: str, model: str, languages: dict[str, int], story_turns: int, timeout_ms: int,
              orchestration: str = "staged", emotion_source: str = "model",
              suggestion_timeout_ms: int = 15_000) -> dict[str, Any]:  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        settings = make_settings(f"sqlite+aiosqlite:///{db}", Path(tmp), COMPANION_LLM_BASE_URL=base_url,
                                 COMPANION_LLM_MODEL=model, COMPANION_LLM_TIMEOUT_MS=str(timeout_ms),
                                 COMPANION_LLM_MAX_TOKENS="1024", COMPANION_TURN_TIMEOUT_S="900")  # fmt: skip
        await upgrade(settings.database_url)
        ledger = Ledger(ModelGateway(settings.llm))
        app = create_app(settings, model=ledger)
        routing: list[dict[str, Any]] = []
        turns: list[dict[str, Any]] = []
        saved: Counter[str] = Counter()
        suggestions: list[dict[str, Any]] = []
        samples: dict[str, list[dict[str, str]]] = defaultdict(list)
        story: Counter[str] = Counter()
        async with AsyncTestClient(app, timeout=3600) as client:
            for language, count in languages.items():
                if not count:
                    continue
                group = await Group(client, language, {"replyLimit": 2, "selection": {"mode": "llm"},
                                                      "orchestration": orchestration,
                                                      "emotionSource": emotion_source,
                                                      "autoReply": {"timeoutMs": suggestion_timeout_ms}}).create()  # fmt: skip
                for text, expected in LINES[language][:count]:
                    started = time.perf_counter()
                    turn = await group.turn(text)
                    seconds = time.perf_counter() - started
                    kept = turn.get("agentMessages") or []
                    orch = turn.get("orchestration") or {}
                    first = (orch.get("timings") or {}).get("firstDelta")
                    turns.append({"language": language, "kept": len(kept), "s": round(seconds, 1),
                                  "firstWordsS": None if first is None else round(first / 1000, 1),
                                  "calls": (orch.get("cost") or {}).get("modelCalls"), "standIn": "standIn" in orch,
                                  "error": (turn.get("error") or {}).get("code")})  # fmt: skip
                    samples[language].append({"user": text, **{f"{group.names[m['agentId']]}"
                                              f"{'(cross)' if m.get('replyKind') == 'cross' else ''}": m["content"]
                                              for m in kept}})  # fmt: skip
                    if expected and turn.get("orchestration"):
                        routing.append({"language": language, **routing_row(turn, group.role_of, expected)})
                    if kept:
                        sug = await _suggestions(client, group.conv_id, turn["turnId"], timeout_ms / 1000 * 4)
                        names = list(group.names.values())
                        ready = bool(sug and sug["status"] == "ready" and not sug["fallback"])
                        suggestions.append({"ready": ready, "similarity": mean_pairwise(sug["options"], names) if ready else None,
                                            "options": sug["options"] if sug else [],
                                            "problems": [] if ready or not sug else sug.get("problems")})  # fmt: skip
                personas = {a: persona_text(language, role) for a, role in group.role_of.items()}
                found = saved_reply_problems(await group.messages(), group.names, language, personas)
                saved.update(code for codes in found.values() for code in codes)
            if story_turns:
                on = {"replyLimit": 1, "story": {"enabled": True, "modelConfigId": "default",
                                                 "modelCallTimeoutMs": 180_000, "postTurnTimeoutMs": 180_000}}  # fmt: skip
                group = await Group(client, "zh-CN", on).create()
                await asyncio.sleep(1)
                for text, _ in LINES["zh-CN"][:story_turns]:
                    turn = await group.turn(text)
                    kept = turn.get("agentMessages") or []
                    meta = (kept[0]["metadata"].get("story") or {}) if kept else {}
                    outcome = meta.get("outcome") if kept else "no_reply"
                    story[str(outcome)] += 1
                    story["standIn"] += "standIn" in (turn.get("orchestration") or {})
                    samples["story"].append({"user": text, "outcome": str(outcome),
                                             **{group.names[m["agentId"]]: m["content"] for m in kept},
                                             "toolCalls": meta.get("toolCalls"),
                                             "error": (turn.get("error") or {}).get("message", "")[:300]})  # fmt: skip
        events = quality_events(db)
    return {"stages": summarize(ledger.calls), **replies(turns, events), "savedRecheck": dict(saved),
            "routing": routing_figures(routing), "suggestions": suggestion_figures(suggestions),
            "story": {"turns": story_turns, "outcomes": {k: v for k, v in story.items() if k != "standIn"},
                      "waitingForAcceptance": story.get("waiting_for_acceptance", 0),
                      "turnsWithAStandIn": story.get("standIn", 0)},
            "samples": samples}  # fmt: skip


def replies(turns: list[dict[str, Any]], events: list[tuple[str, str, str, str, str]]) -> dict[str, Any]:
    dropped = {(t, a, k) for t, a, k, _, action in events if action == "dropped"}
    hits = Counter(reason for *_, reason, action in events)
    kept = sum(t["kept"] for t in turns)
    with_reply = sum(1 for t in turns if t["kept"])
    per_language = {lang: {"turns": len(ts), "withKeptReply": sum(1 for t in ts if t["kept"]),
                           "p50TurnS": statistics.median(t["s"] for t in ts),
                           "p50FirstWordsS": _median([t["firstWordsS"] for t in ts]),
                           "p50ModelCallsBeforeSuggestions": _median([t["calls"] for t in ts])}
                    for lang, ts in itertools.groupby(turns, key=lambda t: t["language"]) for ts in [list(ts)]}  # fmt: skip
    return {"replies": {"kept": kept, "dropped": len(dropped), "checkHits": dict(hits.most_common()),
                        "turns": len(turns), "turnsWithKeptReply": with_reply,
                        "turnsWithKeptReplyPct": round(100 * with_reply / max(1, len(turns)), 1),
                        "turnsWithAStandIn": sum(1 for t in turns if t["standIn"]),
                        "turnErrors": dict(Counter(t["error"] for t in turns if t["error"])), "perLanguage": per_language}}  # fmt: skip


def _median(values: list[Any]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def routing_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    asked = [r for r in rows if r["asked"]]
    return {
        "lines": len(rows), "modelAsked": len(asked),
        "balancedAccuracy": {mode: balanced_accuracy(rows, mode) for mode in ("llm", "scorer", "hybrid")},
        "hybridMargin": DEFAULT_HYBRID_MARGIN,
        "hybridModelCalls": sum(1 for r in asked if r["margin"] is not None and r["margin"] < DEFAULT_HYBRID_MARGIN),
        "hybridSweep": {str(m): balanced_accuracy(rows, "hybrid", m) for m in SWEEP},
        "llmAgreesWithScorer": sum(1 for r in asked if r["llm"] == r["scorer"]),
        "rows": [{k: r[k] for k in ("language", "expected", "llm", "scorer", "margin")} for r in rows],
    }  # fmt: skip


def suggestion_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ready = [r for r in rows if r["ready"]]
    sims = [r["similarity"] for r in ready]
    return {"turns": len(rows), "ready": len(ready), "failed": len(rows) - len(ready),
            "readyPct": round(100 * len(ready) / max(1, len(rows)), 1),
            "meanPairwiseSimilarity": round(statistics.fmean(sims), 3) if sims else None,
            "maxPairwiseSimilarity": round(max(sims), 3) if sims else None,
            "failures": [r["problems"] for r in rows if not r["ready"]][:5],
            "examples": [r["options"] for r in ready][:4]}  # fmt: skip


async def main() -> None:
    import logging

    logging.disable(logging.INFO)
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=["sim", "qwen", "smollm2"], default="sim")
    ap.add_argument("--zh", type=int, default=12, help="Chinese turns (none on smollm2)")
    ap.add_argument("--en", type=int, default=6, help="English turns")
    ap.add_argument("--story", type=int, default=4, help="Chinese turns with the Story on (none on smollm2)")
    ap.add_argument("--orchestration", choices=["staged", "combined"], default="staged",
                    help="the groups' settings.orchestration (issue 32): routing, first words and calls per mode")
    ap.add_argument("--emotion-source", choices=["model", "offline"], default="model",
                    help="the groups' settings.emotionSource: the model's emotion reading or the offline detector's")
    args = ap.parse_args()
    languages = {"zh-CN": 0 if args.target == "smollm2" else args.zh, "en": args.en}
    story = 0 if args.target == "smollm2" else args.story
    with contextlib.ExitStack() as stack:
        if args.target == "sim":
            from app.llm.simulator import start_simulator_in_thread

            handle = start_simulator_in_thread(latency_ms=0, seed=5)
            stack.callback(handle.stop)
            base, timeout_ms, label = handle.base_url, 10_000, "simulator (schema-following, simulated text)"
            suggestion_timeout_ms = 15_000  # the default
        else:
            from tests.realmodel.server import llama_server

            base = stack.enter_context(llama_server(model_name=args.target))
            timeout_ms = 120_000
            suggestion_timeout_ms = 30_000  # the most autoReply.timeoutMs allows, as the README tells CPU users
            label = {"qwen": "llama-server Qwen2.5-Coder-0.5B-Instruct Q4_K_M, CPU",
                     "smollm2": "llama-server SmolLM2-135M-Instruct Q4_1, CPU"}[args.target]  # fmt: skip
        started = time.perf_counter()
        result = await run(base, args.target, languages, story, timeout_ms, args.orchestration, args.emotion_source,
                           suggestion_timeout_ms)  # fmt: skip
    print(json.dumps({"target": label, "orchestration": args.orchestration, "emotionSource": args.emotion_source,
                      "suggestionTimeoutMs": suggestion_timeout_ms, "loadAverage1m": round(os.getloadavg()[0], 2), "wallS": round(time.perf_counter() - started, 1), **result},
                     ensure_ascii=False, indent=1))  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
