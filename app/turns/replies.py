"""Agent replies: generate from the actor prompt (``actor_prompt``), check, regenerate once on a
failed check, drop when the regeneration fails too; a transient model failure is asked for again
(the same request) up to twice before it drops the reply."""

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
from app.turns.sign_off import trim_sign_off


MODEL_FAILURE_RETRIES = 2  # same-request retries of a reply after a transient failure the gateway could not retry


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
    lore: list[dict[str, Any]] = []  # the lore entries in its prompt: id, keys found, priority (metadata ``lore``)


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

    Two budgets, kept apart: failed checks regenerate once (with the correction); a transient model
    failure the gateway could not retry itself (a stream cut after its first words, a call whose
    retries ran out of time) asks for the same request again, up to ``MODEL_FAILURE_RETRIES``
    times, and is raised after that. With a ``channel`` each attempt is streamed as a draft
    (``message.delta``) and a draft that fails (checks or stream) is taken back
    (``message.discarded``). ``problems`` of a dropped reply are those of the last draft;
    ``regenerated_for`` those of the earlier attempts."""
    started = time.perf_counter()
    usage = Usage()
    problems: list[str] = []
    result: ModelResult | None = None
    text = ""
    first: list[str] = []
    checks = prompt.checks
    request = prompt.request
    failures_left, regenerations_left = MODEL_FAILURE_RETRIES, 1
    attempt = 0
    while True:
        attempt += 1
        draft = channel.new() if channel is not None else None
        try:
            result = await (stream_or_complete(model, request, draft.delta) if draft is not None
                            else model.complete(request))  # fmt: skip
        except ModelCircuitOpen:
            raise  # the model is down: no second call into an open breaker
        except UpstreamError as exc:
            if failures_left == 0 or not exc.retryable:
                raise
            failures_left -= 1
            failure = [f"model_error: {exc.code}: {exc.message[:200]}"]
            first = [*first, *failure]
            if draft is not None:
                await draft.discard(failure)
            continue  # the same request again (after failed checks, still the correction)
        usage = add_usage(usage, result.usage)
        text = trim_sign_off(strip_own_label(result.text or "", checks.own_names),
                             (*checks.window, checks.user_text))  # fmt: skip
        problems = reply_problems(
            text, language=checks.language, max_chars=max_chars, other_names=checks.other_names,
            earlier_replies=earlier_replies, own_names=checks.own_names, user_text=checks.user_text,
            window=checks.window, scaffolding=checks.scaffolding, persona=checks.persona, stage=checks.stage,
            to_user=checks.to_user,
        )  # fmt: skip
        if not problems:
            return Reply(agent_id=agent.id, text=text, model=result.model, usage=usage, attempts=attempt,
                         regenerated_for=first, ms=(time.perf_counter() - started) * 1000,
                         draft_id=draft.id if draft else None,
                         first_token_ms=getattr(result, "first_token_ms", None), lore=prompt.lore_record())  # fmt: skip
        if draft is not None:
            await draft.discard(problems)
        if regenerations_left == 0:
            break
        regenerations_left -= 1
        first = [*first, *problems]
        request = prompt.retry(problems).request
    return Reply(agent_id=agent.id, text=text, model=result.model if result else "", usage=usage, attempts=attempt,
                 problems=problems, regenerated_for=first, dropped=True, ms=(time.perf_counter() - started) * 1000,
                 lore=prompt.lore_record())  # fmt: skip
