"""The generation loop: prompt → model → strict checks → bounded repair → result or typed failure.

At most three model attempts (the spec's budget); each retry shows the model its previous
answer and the exact problems, which repairs most failures on the second try. Cancellation
is never swallowed: the app cancels an in-flight generation when the user sends a new
message, and the model call must see that.
"""

from __future__ import annotations

import asyncio
import time
from typing import Callable

import msgspec

from .config import AutoReplyConfig
from .errors import AutoReplyDisabled, AutoReplyGenerationFailed, InvalidSuggestionInput
from .fallback import conservative_options
from .inputs import SuggestionInput, options_json_schema
from .ports import PURPOSE, ChatMessage, ChatModel, ModelRequest, ResponseSchema
from .prompt import DEFAULT_TEMPLATE, build_messages, build_repair, check_template, window
from .text import estimate_tokens
from .validate import check_options, decode_options

MAX_ATTEMPTS = 3
SCHEMA_NAME = "auto_reply_options"


class SuggestionUsage(msgspec.Struct, frozen=True, rename="camel"):
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    estimated: bool = False


class AttemptRecord(msgspec.Struct, frozen=True, rename="camel"):
    problems: list[str]
    ms: float
    usage: SuggestionUsage = SuggestionUsage()


class SuggestionResult(msgspec.Struct, frozen=True, rename="camel"):
    options: list[str]
    usage: SuggestionUsage
    attempts: list[AttemptRecord]
    fallback: bool = False
    model: str | None = None


def format_numbered(options: list[str]) -> str:
    """``1: …\\n2: …`` — the plain-text form some hosts show or paste as is."""
    return "\n".join(f"{i}: {text}" for i, text in enumerate(options, 1))


async def generate_suggestions(
    model: ChatModel,
    input: SuggestionInput,
    config: AutoReplyConfig,
    *,
    template: str | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> SuggestionResult:
    if not config.enabled:
        raise AutoReplyDisabled()
    if not input.anchor.content.strip():
        raise InvalidSuggestionInput("the saved anchor message is empty")
    if not input.language.strip():
        raise InvalidSuggestionInput("no conversation language")
    template = DEFAULT_TEMPLATE if template is None else template
    check_template(template)

    base = build_messages(input, config, template)
    speakers = [input.anchor.agent_name] + [
        m.speaker for m in window(input, config.context_message_count) if m.role != "user"
    ]
    schema = ResponseSchema(SCHEMA_NAME, options_json_schema(config.suggestion_count))
    records: list[AttemptRecord] = []
    total = SuggestionUsage()
    model_name: str | None = None
    messages = base

    for _ in range(MAX_ATTEMPTS):
        request = ModelRequest(
            messages=messages, purpose=PURPOSE, response_schema=schema,
            temperature=config.temperature, max_tokens=config.max_tokens,
            timeout_s=config.timeout_s, model_config_id=config.model_config_id,
        )
        started = clock()
        try:
            result = await asyncio.wait_for(model.complete(request), timeout=config.timeout_s)
        except asyncio.TimeoutError:
            records.append(_record([f"model call timed out after {config.timeout_ms} ms"], started, clock))
            messages = base
            continue
        except Exception as exc:  # CancelledError is a BaseException and propagates
            records.append(_record([f"model call failed: {type(exc).__name__}: {exc}"], started, clock))
            messages = base
            continue

        text = getattr(result, "text", "") or ""
        model_name = getattr(result, "model", None) or model_name
        usage = _usage_of(result, request.messages, text)
        total = _add(total, usage)
        raw, problems = decode_options(text)
        if raw is not None:
            checked = check_options(
                raw, count=config.suggestion_count, max_chars=config.max_suggestion_chars,
                language=input.language, speaker_names=speakers, anchor_text=input.anchor.content,
            )
            problems = checked.problems
        if problems and getattr(result, "finish_reason", None) == "length":
            problems = [*problems, f"output was cut off at maxTokens ({config.max_tokens})"]
        records.append(_record(problems, started, clock, usage))
        if not problems:
            return SuggestionResult(checked.options, total, records, fallback=False, model=model_name)
        messages = build_repair(base, text, problems, config, language=input.language)

    if config.fallback == "conservative":
        options = conservative_options(
            input.language, count=config.suggestion_count, max_chars=config.max_suggestion_chars,
            character_name=input.anchor.agent_name, anchor_text=input.anchor.content,
        )
        return SuggestionResult(options, total, records, fallback=True, model=model_name)
    raise AutoReplyGenerationFailed(
        len(records), [r.problems for r in records], usage=total, records=records, model=model_name
    )


def _record(problems: list[str], started: float, clock: Callable[[], float],
            usage: SuggestionUsage | None = None) -> AttemptRecord:
    ms = round((clock() - started) * 1000, 3)
    return AttemptRecord(list(problems), ms, usage or SuggestionUsage())


def _usage_of(result: object, sent: list[ChatMessage], text: str) -> SuggestionUsage:
    """Provider usage when given; otherwise an estimate, marked ``estimated``."""
    u = getattr(result, "usage", None)
    if u is not None:
        i, o = int(getattr(u, "input_tokens", 0) or 0), int(getattr(u, "output_tokens", 0) or 0)
        if i or o or getattr(u, "estimated", False):
            return SuggestionUsage(i, o, i + o, bool(getattr(u, "estimated", False)))
    i = sum(estimate_tokens(m.content) for m in sent)
    o = estimate_tokens(text)
    return SuggestionUsage(i, o, i + o, True)


def _add(a: SuggestionUsage, b: SuggestionUsage) -> SuggestionUsage:
    return SuggestionUsage(
        a.input_tokens + b.input_tokens, a.output_tokens + b.output_tokens,
        a.total_tokens + b.total_tokens, a.estimated or b.estimated,
    )
