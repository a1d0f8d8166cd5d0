"""The typed shapes a turn leaves: each agent message's metadata and the turn's result."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from app.llm.ledger import CallLedger
from app.llm.port import Usage
from app.turns.replies import Reply

PIPELINE_VERSION = "typed_steps_v2"
SOURCE = "group_chat_agent"
WIRE_API = "chat_completions"
Speculation = Literal["hit", "miss", "none"]


def usage_dict(usage: Usage) -> dict[str, Any]:
    return {"inputTokens": usage.input_tokens, "outputTokens": usage.output_tokens, "estimated": usage.estimated}


class MessageMetadata(msgspec.Struct, rename="camel", kw_only=True):
    """``messages.metadata`` of an agent reply (the seed's keys, plus what this pipeline adds).

    Read with ``MessageMetadata.of(row.metadata_json)``: every field has a default, so rows
    written by older versions (or by an edit) decode too."""

    source: str = SOURCE
    selected_by: str = "fallback"
    pipeline_version: str = PIPELINE_VERSION
    model: str = ""
    model_config_id: str | None = None  # the config the reply was written with (a member's own, or the actor stage's)
    wire_api: str = WIRE_API
    reply_kind: str = "primary"
    respond_to_agent_id: str | None = msgspec.field(default=None)
    cross_reply_reason: str | None = None
    cross_reply_round: int | None = None
    orchestration: dict[str, Any] = {}
    timings: dict[str, float] = {}
    usage: dict[str, Any] = {}
    attempts: int = 1
    speculation: Speculation = "none"
    story: dict[str, Any] | None = None
    regenerations: list[dict[str, Any]] | None = None
    lore: list[dict[str, Any]] = []  # the lore entries in the reply's prompt: {id, keys, priority} (issue 28)

    @classmethod
    def of(cls, raw: dict[str, Any] | None) -> MessageMetadata:
        return msgspec.convert(raw or {}, cls, strict=False)

    @classmethod
    def for_reply(cls, reply: Reply, *, selected_by: str, speculation: Speculation, orchestration: dict[str, Any],
                  timings: dict[str, float], model_config_id: str | None = None) -> MessageMetadata:  # fmt: skip
        return cls(
            selected_by=selected_by, model=reply.model, model_config_id=model_config_id, reply_kind=reply.kind, respond_to_agent_id=reply.respond_to_agent_id,
            cross_reply_reason=reply.cross_reason, cross_reply_round=reply.cross_round, orchestration=orchestration,
            timings={**timings, "reply": round(reply.ms, 3)}, usage=usage_dict(reply.usage), attempts=reply.attempts,
            speculation=speculation, lore=reply.lore,
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        out = msgspec.to_builtins(self)
        for key in ("story", "regenerations"):  # a plugin's key only where it has something to say
            if out.get(key) is None:
                out.pop(key, None)
        return out


class TurnResult(msgspec.Struct, rename="camel", kw_only=True, omit_defaults=True):
    """The turn response (JSON body, ``turn.completed``/``turn.failed`` data, ``turns.result``)."""

    turn_id: str
    status: str  # completed | failed | cancelled
    conversation_id: str
    user_message: dict[str, Any] | None
    agent_messages: list[dict[str, Any]] = []
    orchestration: dict[str, Any] = {}
    error: dict[str, Any] | None = None
    suggestions: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET
    trigger: str | None = None  # what started it: user | continue | auto (``turns.trigger``)

    def to_json(self) -> dict[str, Any]:
        out = msgspec.to_builtins(self)
        out.setdefault("agentMessages", [])
        out.setdefault("orchestration", {})
        out.setdefault("error", None)
        return out


def turn_cost(ledger: CallLedger, started_at: float, timings: dict[str, float], ctx: Any, *,
              late: bool = False) -> dict[str, Any]:  # fmt: skip
    """``orchestration.cost``: the turn's model calls and tokens per stage (``CallLedger.cost``),
    how many had ended before the first words, and the orchestration mode. ``late``: the
    plugins' late calls (suggestions) are included (the stored result after they ran)."""
    first = timings.get("firstDelta")
    cost = ledger.cost(None if first is None else started_at + first / 1000)
    mode = ctx.config.orchestration if ctx is not None else None
    return {"orchestration": mode, "includesLate": late, **cost}
