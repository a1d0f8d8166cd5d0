"""Reply drafts on the event stream: ``message.delta`` while a reply is generated, then
``message.discarded`` when a visible draft fails its checks (``message.created`` is the saved
message itself, sent by the pipeline).

A speculative actor's drafts are *held*: their text is buffered until the selection confirms
the agent (``release`` sends it as one coalesced delta) or dropped silently when it does not,
so a user never sees a reply from an agent that was not chosen.
"""

from __future__ import annotations

import uuid
from typing import Any

from app.turns.plugins import Emit


class Draft:
    def __init__(self, channel: DraftChannel) -> None:
        self.channel = channel
        self.id = uuid.uuid4().hex
        self.text: list[str] = []
        self.offset = 0  # chars already sent

    async def delta(self, piece: str) -> None:
        if not piece:
            return
        self.text.append(piece)
        if not self.channel.held:
            await self._send()

    async def _send(self) -> None:
        pending = "".join(self.text)[self.offset:]
        if pending:
            at, self.offset = self.offset, self.offset + len(pending)
            await self.channel.send(self, pending, at)

    async def discard(self, problems: list[str]) -> None:
        if self.offset and not self.channel.held:  # only a draft the user saw needs taking back
            await self.channel.emit("message.discarded", {
                "turnId": self.channel.turn_id, "draftId": self.id, "agentId": self.channel.agent_id,
                "problems": problems,
            })  # fmt: skip


class DraftChannel:
    """All drafts of one agent's reply in this turn (a regeneration is a new draft)."""

    def __init__(self, emit: Emit, turn_id: str, agent_id: str, *, held: bool, on_first: Any = None) -> None:
        self.emit, self.turn_id, self.agent_id, self.held = emit, turn_id, agent_id, held
        self.drafts: list[Draft] = []
        self.on_first = on_first  # called once, when the first delta of the turn is sent

    def new(self) -> Draft:
        draft = Draft(self)
        self.drafts.append(draft)
        return draft

    @property
    def current(self) -> Draft | None:
        return self.drafts[-1] if self.drafts else None

    async def send(self, draft: Draft, text: str, offset: int) -> None:
        if self.on_first is not None:
            self.on_first()
        await self.emit("message.delta", {"turnId": self.turn_id, "draftId": draft.id, "agentId": self.agent_id,
                                          "delta": text, "offset": offset})  # fmt: skip

    async def release(self) -> None:
        """The speculation was confirmed: send what the current draft holds so far."""
        if not self.held:
            return
        self.held = False
        if self.current is not None:
            await self.current._send()
