"""Agent replies: generate from the actor prompt (``actor_prompt``), check, regenerate once on a
failed check, drop when the regeneration fails too."""

from __future__ import annotations

import time
from typing import Any

import msgspec

from app.db.models import Agent
from app.errors import ModelCircuitOpen, UpstreamError
from app.llm.port import ModelResult, Usage, stream_or_complete
from app.llm.usage import add_usage
from app.turns.actor_prompt import ActorPrompt
from app.turns.drafts import DraftChannel
from app.turns.quality import reply_problems, strip_own_label


class Reply(msgspec.Struct, kw_only=True):
    agent_id: str
    text: str
    kind: str = "primary"  # primary | cross
    respond_to_agent_id: str | None = None
    cross_reason: str | None = None
    cross_round: int | None = None
    model: str = ""
    usage: Usage = Usage()
    ms: float = 0.0
    attempts: int = 1
    problems: list[str] = []
    regenerated_for: list[str] = []
    dropped: bool = False
    judge_runs: list[Any] = []  # StageRun[QualityVerdict] of the LLM quality check, when on
    draft_id: str | None = None  # the streamed draft this reply was saved from
    first_token_ms: float | None = None


async def generate_checked(
    model: Any,
    prompt: ActorPrompt,
    agent: Agent,
    *,
    max_chars: int,
    earlier_replies: list[str],
    channel: DraftChannel | None = None,
) -> Reply:
    """Generate, check, regenerate once with the problems named, then drop if still failing.

    With a ``channel`` each attempt is streamed as a draft (``message.delta``) and a draft that
    fails its checks is taken back (``message.discarded``). ``problems`` of a dropped reply are
    those of the regenerated draft; ``regenerated_for`` those of the first."""
    started = time.perf_counter()
    usage = Usage()
    problems: list[str] = []
    result: ModelResult | None = None
    text = ""
    first: list[str] = []
    checks = prompt.checks
    failed_call = False
    for attempt in (1, 2):
        current = prompt.request
        if attempt == 2:
            first = problems
            # After a model failure the same request again; after failed checks, the correction.
            current = prompt.request if failed_call else prompt.retry(problems).request
        draft = channel.new() if channel is not None else None
        try:
            result = await (stream_or_complete(model, current, draft.delta) if draft is not None
                            else model.complete(current))  # fmt: skip
        except ModelCircuitOpen:
            raise  # the model is down: no second call into an open breaker
        except UpstreamError as exc:
            # A transient failure the gateway could not retry itself (a stream cut after the user
            # saw its first words): the draft is taken back and the reply asked for once more.
            if attempt == 2 or not exc.retryable:
                raise
            failed_call, problems = True, [f"model_error: {exc.code}: {exc.message[:200]}"]
            if draft is not None:
                await draft.discard(problems)
            continue
        usage = add_usage(usage, result.usage)
        text = strip_own_label(result.text or "", checks.own_names)
        problems = reply_problems(
            text, language=checks.language, max_chars=max_chars, other_names=checks.other_names,
            earlier_replies=earlier_replies, own_names=checks.own_names, user_text=checks.user_text,
            window=checks.window, scaffolding=checks.scaffolding, persona=checks.persona,
        )  # fmt: skip
        if not problems:
            return Reply(agent_id=agent.id, text=text, model=result.model, usage=usage, attempts=attempt,
                         regenerated_for=first, ms=(time.perf_counter() - started) * 1000,
                         draft_id=draft.id if draft else None,
                         first_token_ms=getattr(result, "first_token_ms", None))  # fmt: skip
        if draft is not None:
            await draft.discard(problems)
    return Reply(agent_id=agent.id, text=text, model=result.model if result else "", usage=usage, attempts=2,
                 problems=problems, regenerated_for=first, dropped=True, ms=(time.perf_counter() - started) * 1000)  # fmt: skip
