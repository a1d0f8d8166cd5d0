"""The generation: prompt → the host's structured path → strict checks → result or typed failure.

The library declares the answer (``SuggestionOptions``), its per-request bounds (exactly
``suggestionCount`` options, each at most ``maxSuggestionChars`` characters) and its checks; the
host's ``complete_struct`` builds the wire schema, decodes and checks. The list is asked once:
when it is rejected (or the call fails), the options of it that pass the checks are kept and the
missing ones are written one plain line each (``lines``: a small model that copies one sentence
into every slot of a list still writes a line of its own when asked for one), each round of
lines one attempt.

Budget: at most ``MAX_ATTEMPTS`` model attempts in total. A model error or timeout is one failed
attempt; the lines then get the attempts that remain. The host enforces the per-call ``timeoutMs`` it is sent; as a safety net
for a host that does not, the whole generation never takes longer than ``MAX_ATTEMPTS`` ×
``timeoutMs``, the bound the spec gives. Cancellation is never swallowed: the app cancels an
in-flight generation when the user sends a new message, and the model call must see that.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

import msgspec

from .config import AutoReplyConfig
from .errors import AutoReplyDisabled, AutoReplyGenerationFailed, InvalidSuggestionInput
from .fallback import conservative_options
from .lines import check_list, fill_lines, talk_of, usable
from .inputs import SuggestionInput, SuggestionOptions, option_constraints
from .ports import PURPOSE, ModelRequest, StructuredModel
from .prompt import DEFAULT_TEMPLATE, build_messages, check_template, window
from .usage import MAX_ATTEMPTS, SuggestionUsage, add_usage, usage_of
from .validate import Checked

SCHEMA_NAME = "auto_reply_options"


class AttemptRecord(msgspec.Struct, frozen=True, rename="camel"):
    """One model attempt: what was wrong with it (empty for the accepted one) and how long it took.

    Token usage is reported for the whole generation (``SuggestionResult.usage``): the host's
    structured path sums it over its attempts."""

    problems: list[str]
    ms: float


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
    model: StructuredModel,
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

    speakers = [input.anchor.agent_name] + [
        m.speaker for m in window(input, config.context_message_count) if m.role != "user"
    ]
    talk = talk_of(input, config, speakers)
    request = ModelRequest(
        messages=build_messages(input, config, template), purpose=PURPOSE, temperature=config.temperature,
        max_tokens=config.max_tokens, timeout_s=config.timeout_s, model_config_id=config.model_config_id,
    )
    constraints = option_constraints(config.suggestion_count, config.max_suggestion_chars)

    def check(value: SuggestionOptions) -> Checked:
        return check_list(value.options, input, config, speakers, talk)

    records: list[AttemptRecord] = []
    total = SuggestionUsage()
    model_name: str | None = None
    kept: list[str] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + MAX_ATTEMPTS * config.timeout_s

    # 1. The options as one list (the seed's call), asked once: a model that follows it is done.
    seen = _Seen(lambda value: check(value).problems)
    started = clock()
    try:
        async with asyncio.timeout_at(deadline) as guard:
            outcome = await model.complete_struct(
                request, SuggestionOptions, constraints=constraints, repairs=0, validate=seen.validate,
                schema_name=SCHEMA_NAME,
            )
    except Exception as exc:  # CancelledError is a BaseException and propagates
        spent = _spent_attempts(exc)
        if spent is not None:  # the answer was rejected: keep what of it passes the checks
            records += [seen.record(*attempt, config) for attempt in spent]
            total = add_usage(total, usage_of(getattr(exc, "usage", None)))
            model_name = getattr(exc, "model", None) or model_name
            if isinstance(seen.last, SuggestionOptions) and spent[-1][2] != "length":  # never a cut-off answer
                kept = usable(seen.last.options, input, config, speakers, talk)
        else:  # a model error or timeout: one failed attempt
            records.append(AttemptRecord([_failure(exc, config, expired=guard.expired())], _ms(started, clock())))
    else:
        records += [seen.record(*_attempt(a), config) for a in outcome.attempts]
        total = add_usage(total, usage_of(outcome.usage))
        model_name = getattr(outcome, "model", None) or model_name
        return SuggestionResult(check(outcome.value).options, total, records, fallback=False, model=model_name)

    # 2. The options it lacks, one line each (``lines``), with the attempts that remain.
    if len(records) < MAX_ATTEMPTS and loop.time() < deadline:
        filled = await fill_lines(model, input, config, kept, talk=talk, speakers=speakers,
                                  rounds=MAX_ATTEMPTS - len(records), deadline=deadline)  # fmt: skip
        records += [AttemptRecord(r.problems, r.ms) for r in filled.rounds]
        total = add_usage(total, filled.usage)
        model_name = filled.model or model_name
        if filled.complete(config.suggestion_count):
            return SuggestionResult(filled.options, total, records, fallback=False, model=model_name)

    if config.fallback == "conservative":
        options = conservative_options(
            input.language, count=config.suggestion_count, max_chars=config.max_suggestion_chars,
            character_name=input.anchor.agent_name, anchor_text=input.anchor.content,
        )
        return SuggestionResult(options, total, records, fallback=True, model=model_name)
    raise AutoReplyGenerationFailed(
        len(records), [r.problems for r in records], usage=total, records=records, model=model_name
    )


class _Seen:
    """The list's check as the host's structured path sees it: problems as a list (the host joins
    them into one string; ``record`` splits them back) and the latest decoded answer, whose
    passing options are kept when the answer is rejected."""

    def __init__(self, check: Callable[[Any], list[str]]) -> None:
        self.check = check
        self.split: dict[str, list[str]] = {}
        self.last: Any = None

    def validate(self, value: Any) -> list[str]:
        self.last = value
        problems = list(self.check(value))
        if problems:
            self.split["; ".join(problems)] = problems
        return problems

    def record(self, problem: str | None, ms: float | None, finish_reason: str | None,
               config: AutoReplyConfig) -> AttemptRecord:  # fmt: skip
        problems = [] if problem is None else list(self.split.get(problem, [problem]))
        if problems and finish_reason == "length":
            problems.append(f"output was cut off at maxTokens ({config.max_tokens})")
        return AttemptRecord(problems, round(float(ms or 0.0), 3))


def _ms(start: float, end: float) -> float:
    return round((end - start) * 1000, 3)


def _attempt(a: Any) -> tuple[str | None, float | None, str | None]:
    return getattr(a, "problem", None), getattr(a, "ms", None), getattr(a, "finish_reason", None)


def _spent_attempts(exc: Exception) -> list[tuple[str | None, float | None, str | None]] | None:
    """The host's "repair budget spent" error, read duck-typed: its attempts, else its problems."""
    diagnostics = getattr(exc, "diagnostics", None)
    if isinstance(diagnostics, list) and diagnostics and all(hasattr(d, "problem") for d in diagnostics):
        return [_attempt(d) for d in diagnostics]
    problems = getattr(exc, "problems", None)
    if isinstance(problems, list) and problems and all(isinstance(p, str) for p in problems):
        return [(p, None, None) for p in problems]
    return None


def _failure(exc: Exception, config: AutoReplyConfig, *, expired: bool) -> str:
    if expired:
        return f"model call timed out: no answer within the generation's budget ({MAX_ATTEMPTS} × {config.timeout_ms} ms)"
    if isinstance(exc, TimeoutError) or getattr(exc, "code", None) == "model_timeout":
        return f"model call timed out after {config.timeout_ms} ms"
    return f"model call failed: {type(exc).__name__}: {exc}"
