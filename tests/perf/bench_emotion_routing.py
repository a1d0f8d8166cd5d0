"""Benchmark: who the scorer puts first on the model's emotion reading vs the offline detector's.

The four-member group and the 18 labelled lines of ``tests/realmodel/group.py`` (a clear expected
first speaker each). Per line the emotion is read twice: by the model's emotion stage (the app's
``understand`` through the real gateway, as a staged turn asks it) and by the offline detector
(``fallback_emotion``, what ``settings.emotionSource: offline`` uses). The fallback scorer ranks
the members on each reading with the default weights; prints JSON with each reading, the pick and
the balanced accuracy (mean recall over the four roles) per source, and the model's time per line.
Nothing else of a turn runs, so this is the emotion source's effect on routing alone.

    python tests/perf/bench_emotion_routing.py [--target qwen|smollm2|sim]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import msgspec  # noqa: E402

from app.llm.config import LLMSettings, ModelConfig  # noqa: E402
from app.llm.gateway import ModelGateway  # noqa: E402
from app.turns.understanding import understand  # noqa: E402
from scheduling import (  # noqa: E402
    DEFAULT_WEIGHTS, AgentCapabilities, AgentProfile, UserEmotion, build_speaking_context, fallback_emotion,
    score_candidates,
)
from tests.realmodel.group import CAPABILITIES, LINES, PERSONAS, ROLES  # noqa: E402


def group(language: str) -> list[AgentProfile]:
    return [
        AgentProfile(id=role, name=PERSONAS[language][role]["name"], headline=PERSONAS[language][role]["headline"],
                     personality_prompt=PERSONAS[language][role]["personalityPrompt"],
                     tone_prompt=PERSONAS[language][role]["tonePrompt"],
                     capabilities=AgentCapabilities(**CAPABILITIES[role]), display_order=i)
        for i, role in enumerate(ROLES)
    ]  # fmt: skip


def scorer_pick(agents: list[AgentProfile], emotion: UserEmotion) -> str:
    context = build_speaking_context(agents, {}, [], emotion)
    return score_candidates(agents, context, [], DEFAULT_WEIGHTS, emotion)[0].agent_id


def balanced_accuracy(rows: list[dict[str, Any]], key: str) -> float:
    recalls = []
    for language in LINES:
        for role in ROLES:
            mine = [r for r in rows if r["language"] == language and r["expected"] == role]
            if mine:
                recalls.append(sum(r[key] == role for r in mine) / len(mine))
    return round(sum(recalls) / len(recalls), 3)


def _needs(emotion: UserEmotion) -> list[str]:
    return [n for n, on in (("comfort", emotion.needs_comfort), ("advice", emotion.needs_advice),
                            ("deescalation", emotion.needs_deescalation)) if on]  # fmt: skip


async def run(base_url: str, model: str) -> dict[str, Any]:
    config = ModelConfig(id="bench", base_url=base_url, model=model, timeout_ms=120_000)
    gateway = ModelGateway(LLMSettings(models={"bench": config}, stages={"intent": "bench", "emotion": "bench"}))
    rows = []
    for language, lines in LINES.items():
        agents = group(language)
        for text, expected in lines:
            if expected is None:
                continue
            offline = fallback_emotion(text)
            started = time.perf_counter()
            _, read = await understand(gateway, text, agents, "", language, direct=False)
            rows.append({"language": language, "text": text, "expected": expected, "modelSource": read.source,
                         "modelS": round(time.perf_counter() - started, 1),
                         "model": scorer_pick(agents, read.value), "offline": scorer_pick(agents, offline),
                         "modelEmotion": msgspec.to_builtins(read.value)["primaryEmotion"],
                         "modelNeeds": _needs(read.value), "offlineEmotion": offline.primary_emotion,
                         "offlineNeeds": _needs(offline), "modelReading": msgspec.to_builtins(read.value)})  # fmt: skip
    await gateway.aclose()
    return {"lines": len(rows), "balancedAccuracy": {"model": balanced_accuracy(rows, "model"),
                                                     "offline": balanced_accuracy(rows, "offline")},
            "modelFellBack": sum(r["modelSource"] != "llm" for r in rows), "rows": rows}  # fmt: skip


async def main() -> None:
    logging.disable(logging.INFO)
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=["qwen", "smollm2", "sim"], default="qwen")
    args = ap.parse_args()
    with contextlib.ExitStack() as stack:
        if args.target == "sim":
            from app.llm.simulator import start_simulator_in_thread

            handle = start_simulator_in_thread(latency_ms=0, seed=5)
            stack.callback(handle.stop)
            base = handle.base_url
        else:
            from tests.realmodel.server import llama_server

            base = stack.enter_context(llama_server(model_name=args.target))
        result = await run(base, args.target)
    print(json.dumps({"target": args.target, **result}, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
