"""``companion demo``: a scripted group session, end to end, in-process on a temporary SQLite.

Three companions (a gentle listener, a rational planner, a playful joker), one group, five user
messages (sadness, an advice request, anger, a joke, an explicit mention). Per turn it prints the
detected emotion and its source, every candidate's features and score, who was selected and by
what, and the replies. Uses the configured LLM, or the simulator with ``--simulate`` (labelled as
such); with neither, the offline fallbacks decide and the reply stage says it needs a model.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from litestar.testing import AsyncTestClient

from app.auth.tokens import issue_token
from app.main import create_app
from app.settings import load_settings

AGENTS = [
    {"name": "莉娅", "headline": "温柔的倾听者", "description": "温柔、共情、擅长安慰和陪伴",
     "personalityPrompt": "说话轻柔，先接住情绪再回应", "capabilities": {"comfort": 0.95, "analysis": 0.25, "deescalation": 0.7, "playful": 0.2}},
    {"name": "周衡", "headline": "理性的规划师", "description": "冷静、理性，擅长分析问题、给出可执行的建议",
     "personalityPrompt": "条理清晰，先拆解问题再给步骤", "capabilities": {"comfort": 0.25, "analysis": 0.95, "deescalation": 0.55, "playful": 0.1}},
    {"name": "小跳", "headline": "活泼的开心果", "description": "幽默、爱玩梗，让气氛轻松起来",
     "personalityPrompt": "语气轻快，喜欢开玩笑", "capabilities": {"comfort": 0.3, "analysis": 0.1, "deescalation": 0.2, "playful": 0.95}},
]  # fmt: skip
MESSAGES = [
    "我今天真的好难过，感觉什么都做不好……",
    "我该怎么准备下周的面试？有什么建议吗",
    "气死我了！！同事又把锅甩给我！！",
    "哈哈哈给你们讲个笑话，程序员最怕什么？需求变更😂",
    "周衡，你觉得我要不要换工作？",
]


async def run_demo(out: Callable[[str], None], *, base_url: str | None, label: str) -> None:
    with tempfile.TemporaryDirectory(prefix="companion-demo-") as tmp:
        env = {"COMPANION_DATA_DIR": tmp, "COMPANION_JWT_SECRET": "demo-secret-" + "x" * 24}
        if base_url:
            env.update(COMPANION_LLM_BASE_URL=base_url, COMPANION_LLM_MODEL="simulator")
        import os

        for key in ("COMPANION_LLM_BASE_URL", "COMPANION_LLM_MODEL", "COMPANION_LLM_API_KEY", "OPENAI_API_KEY"):
            if key in os.environ and key not in env:
                env[key] = os.environ[key]
        settings = load_settings(env)
        has_model = bool(settings.llm.models)
        out(f"== companion demo on a temporary SQLite database ({Path(tmp) / 'companion.db'})")
        out(f"== model: {label if has_model else 'none — offline fallbacks decide; replies need a model'}")
        admin = {"Authorization": "Bearer " + issue_token(settings.jwt_secret, "demo-admin", admin=True)}
        user = {"Authorization": "Bearer " + issue_token(settings.jwt_secret, "demo-user")}
        async with AsyncTestClient(create_app(settings), timeout=120) as client:
            ids = [(await client.post("/v1/agents", json=a, headers=admin)).json()["id"] for a in AGENTS]
            names = dict(zip(ids, (a["name"] for a in AGENTS), strict=True))
            conv = (await client.post("/v1/conversations", json={"kind": "group", "agentIds": ids, "title": "demo"},
                                      headers=user)).json()  # fmt: skip
            for i, text in enumerate(MESSAGES, 1):
                out(f"\n--- turn {i}: user: {text}")
                if has_model:
                    resp = await client.post(f"/v1/conversations/{conv['id']}/turns", json={"content": text}, headers=user)
                    _print_turn(out, resp.json(), names)
                else:
                    await client.post(f"/v1/conversations/{conv['id']}/messages", json={"content": text}, headers=user)
                    _print_offline(out, text, ids, names, conv, settings)


def _print_turn(out: Callable[[str], None], body: dict[str, Any], names: dict[str, str]) -> None:
    if "orchestration" not in body:
        out(f"  turn failed: {body}")
        return
    orch = body["orchestration"]
    emo = orch.get("emotion", {})
    out(f"  emotion: {emo.get('primaryEmotion')} intensity={emo.get('intensity')} "
        f"comfort={emo.get('needsComfort')} advice={emo.get('needsAdvice')} deescalation={emo.get('needsDeescalation')} "
        f"(by {emo.get('source')})")  # fmt: skip
    sel = orch.get("selection", {})
    _print_candidates(out, sel.get("candidates", []), names)
    out(f"  selected: " + ", ".join(f"{names.get(a, a)} by {sel.get('selectedBy', {}).get(a)}"
                                     for a in sel.get("selectedAgentIds", [])) + f"  — {sel.get('reason', '')}")  # fmt: skip
    for m in body.get("agentMessages", []):
        kind = f" (cross reply to {names.get(m['respondToAgentId'], '')})" if m.get("replyKind") == "cross" else ""
        out(f"  {names.get(m['agentId'], m['agentId'])}{kind}: {m['content']}")
    for key, q in orch.get("quality", {}).items():
        if not q.get("passed"):
            out(f"  {names.get(key.split(':')[0], key)}: reply dropped by the quality check — {'; '.join(q.get('problems', []))}")
    if body.get("status") != "completed":
        out(f"  turn {body.get('status')}: {body.get('error')}")


def _print_candidates(out: Callable[[str], None], candidates: list[dict[str, Any]], names: dict[str, str]) -> None:
    for c in candidates:
        f = c["features"]
        feats = " ".join(f"{k}={v:.2f}" for k, v in f.items())
        out(f"    #{c['rank']} {names.get(c['agentId'], c['agentId'])}: score={c['score']:.3f} {feats}")


def _print_offline(out, text, ids, names, conv, settings) -> None:  # noqa: ANN001
    from scheduling import (
        AgentCapabilities, AgentProfile, build_speaking_context, decide_speakers, fallback_emotion, fallback_intent,
        find_mentions,
    )  # fmt: skip

    profiles = [AgentProfile(id=i, name=a["name"], headline=a["headline"], description=a["description"],
                             capabilities=AgentCapabilities(**a["capabilities"]), display_order=n)
                for n, (i, a) in enumerate(zip(ids, AGENTS, strict=True))]  # fmt: skip
    emotion = fallback_emotion(text)
    intent = fallback_intent(text, profiles)
    mentions = find_mentions(text, profiles)
    context = build_speaking_context(profiles, {}, [], emotion, window=settings.recent_window)
    decision = decide_speakers(agents=profiles, context=context, intent=intent, mentions=mentions,
                               reply_limit=conv["settings"]["replyLimit"])  # fmt: skip
    out(f"  emotion: {emotion.primary_emotion} intensity={emotion.intensity} comfort={emotion.needs_comfort} "
        f"advice={emotion.needs_advice} deescalation={emotion.needs_deescalation} (by fallback: no model)")  # fmt: skip
    import msgspec

    _print_candidates(out, msgspec.to_builtins(decision.candidates), names)
    out("  selected: " + ", ".join(f"{names[a]} by {decision.selected_by[a]}" for a in decision.selected_agent_ids))
    out("  replies: not generated — the actor stage needs a model (set COMPANION_LLM_BASE_URL/COMPANION_LLM_MODEL "
        "or run `companion demo --simulate`)")


def main(simulate: bool, out: Callable[[str], None] = print) -> None:
    if not simulate:
        asyncio.run(run_demo(out, base_url=None, label="configured LLM"))
        return
    from app.llm.simulator import start_simulator_in_thread

    with start_simulator_in_thread(latency_ms=50, seed=1) as sim:
        out(f"== using the LLM SIMULATOR at {sim.base_url}: every reply below is simulated, not a real model")
        asyncio.run(run_demo(out, base_url=sim.base_url, label="LLM simulator (simulated output)"))
