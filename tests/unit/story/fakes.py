"""A scripted model fake: responses are enqueued per purpose; every request is recorded.

Text-level fakes joined to the app's one structured path (``Structured``), so every request
the library makes carries the real wire schema and the real repair loop runs."""

from __future__ import annotations

import json
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

from app.llm.structured import Structured
from story.ports import ModelRequest, SavedMessage


@dataclass(frozen=True)
class FakeUsage:
    input_tokens: int = 10
    output_tokens: int = 5
    estimated: bool = False


@dataclass(frozen=True)
class FakeResult:
    text: str
    usage: FakeUsage = FakeUsage()
    model: str = "scripted"
    finish_reason: str | None = "stop"


@dataclass
class ScriptedModel(Structured):
    queues: dict[str, deque] = field(default_factory=lambda: defaultdict(deque))
    history: list[ModelRequest] = field(default_factory=list)

    def enqueue(self, purpose: str, *responses: Any) -> "ScriptedModel":
        for r in responses:
            self.queues[purpose].append(r)
        return self

    def calls(self, purpose: str) -> list[ModelRequest]:
        return [r for r in self.history if r.purpose == purpose]

    async def complete(self, request: ModelRequest) -> FakeResult:
        self.history.append(request)
        q = self.queues[request.purpose]
        if not q:
            raise RuntimeError(f"no scripted response for {request.purpose}")
        r = q.popleft()
        if hasattr(r, "__await__"):  # a slow or hanging answer
            r = await r
        if isinstance(r, BaseException):
            raise r
        return FakeResult(r if isinstance(r, str) else json.dumps(r))


class MemoryReader:
    def __init__(self) -> None:
        self.messages: dict[str, SavedMessage] = {}

    def put(self, message_id: str, content: str, agent_id: str | None = "lia") -> None:
        self.messages[message_id] = SavedMessage(message_id, content, agent_id)

    async def read(self, message_ids: list[str]) -> dict[str, SavedMessage]:
        return {i: self.messages[i] for i in message_ids if i in self.messages}


class FunctionModel(Structured):
    """The function fake: ``fn(request, n)`` answers the n-th request (0-based) with text, a JSON
    value, an exception to raise, or an awaitable (e.g. a sleep that outlives the timeout)."""

    def __init__(self, fn) -> None:
        self.fn = fn
        self.history: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> FakeResult:
        n = len(self.history)
        self.history.append(request)
        r = self.fn(request, n)
        if hasattr(r, "__await__"):
            r = await r
        if isinstance(r, BaseException):
            raise r
        return FakeResult(r if isinstance(r, str) else json.dumps(r))
