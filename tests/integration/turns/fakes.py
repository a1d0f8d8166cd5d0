"""A scripted 'world' for pipeline tests: a FunctionModel that answers by purpose."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from app.llm.fakes import FunctionModel

EMOTION_SAD = {"primaryEmotion": "sad", "intensity": 0.7, "needsComfort": True, "needsAdvice": False,
               "needsDeescalation": False, "socialEnergy": "low", "reason": "用户说很难过"}  # fmt: skip
INTENT_CHAT = {"kind": "chit_chat", "addressedAgentIds": [], "wantsMultipleVoices": False}
NO_CROSS = {"reply": None, "reason": "不需要"}


class World:
    """Per-purpose handlers; ``calls`` counts requests by purpose; ``delay`` simulates latency."""

    def __init__(self, **handlers: Any) -> None:
        self.handlers: dict[str, Any] = {
            "intent": INTENT_CHAT,
            "emotion": EMOTION_SAD,
            "select": None,
            "actor": lambda req: f"{_comfort(req)}（{speaker(req)}）",
            "cross_reply.plan": NO_CROSS,
            "cross_reply": lambda req: f"我同意你说的。（{speaker(req)}）",
            "auto_reply": {"options": ["我想听你多说一点。", "这件事让你有什么感受？", "我们先换个轻松的话题吧。"]},
            **handlers,
        }
        self.calls: list[str] = []
        self.delay = 0.0
        self.active = 0
        self.max_active = 0
        self.model = FunctionModel(self._answer)

    async def _answer(self, request: Any) -> Any:
        self.calls.append(request.purpose)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            handler = self.handlers[request.purpose]
            if isinstance(handler, list):
                handler = handler.pop(0) if len(handler) > 1 else handler[0]
            if isinstance(handler, BaseException):
                raise handler
            if callable(handler):
                handler = handler(request)
                if asyncio.iscoroutine(handler):
                    handler = await handler
            return handler
        finally:
            self.active -= 1


COMFORT = ("我在这里陪着你。", "慢慢说，我一直都在听。", "要不要先深呼吸一下，再告诉我发生了什么？",
           "今天辛苦了，先照顾好自己。")


def _comfort(request: Any) -> str:
    """A different line for each of the agent's own earlier lines (its ``assistant`` turns), so a
    Continue or a second turn does not re-say what it said, which the reply checks would drop."""
    own = sum(1 for m in request.messages if m.role == "assistant")
    return COMFORT[own % len(COMFORT)]


def speaker(request: Any) -> str:
    """The agent's name from the persona system message ("你是林溪。" or "You are Lin Xi. ")."""
    for m in request.messages:
        if m.role != "system":
            continue
        for lead, stop in (("你是", "。"), ("You are ", ".")):
            if lead in m.content:
                return m.content.split(lead, 1)[1].split(stop, 1)[0].split(",", 1)[0]
    return "?"


def persona(request: Any) -> str:
    """All system text of a request (the persona, Story material, a restated language)."""
    return "\n".join(m.content for m in request.messages if m.role == "system")


def select(*ids: str, reason: str = "适合安慰") -> Callable[[Any], dict[str, Any]]:
    return lambda req: {"selectedAgentIds": list(ids), "reason": reason}
