"""The ``openai.AsyncOpenAI`` adapter behind the model port.

This module is the only ``openai`` code in the app. It resolves a request to a model config
(explicit ``model_config_id``, else the stage map keyed by the purpose's first segment), shapes
the structured-output request for what that provider supports, and turns every ``openai``
failure into the app's error tree so callers can choose a fallback by error type. Retries are
ours (``max_retries=0``): the client must never retry behind our budget's back. Transient
errors are retried within the call's deadline, behind a circuit breaker per model config
(``app.llm.retry``, ``app.llm.circuit``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

import msgspec
import openai

from app.errors import ModelContextOverflow, ModelNotConfigured, ModelRefused, ModelTimeout, ModelUnavailable, UpstreamError
from app.llm.circuit import CircuitState
from app.llm.config import LLMSettings, ModelConfig
from app.llm.port import ModelResult, OnDelta, Usage
from app.llm.retry import Retrier, RetryableAnswer, parse_retry_after
from app.llm.structured import Structured, schema_instruction
from app.llm.usage import add_usage, estimate_usage
from app.metrics import observed_model_call, record_circuit_open

ClientFactory = Callable[[ModelConfig, str], Any]
_CONTEXT_OVERFLOW = re.compile(r"context (size|length|window)|maximum context|context_length_exceeded|too many tokens")
# An error that shows the server rejects a parameter names the setting that changes it.
_PARAMETER_HINTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("response_format", "json_schema", "grammar", "schema"),
     " (if the provider lacks json_schema support, set llm.models.{id}.structuredOutput to json_object or prompt)"),
    (("max_tokens", "max_completion_tokens", "n_predict"), " (check llm.models.{id}.maxTokens)"),
    (("temperature",), " (check llm.models.{id}.temperature)"),
    (("presence_penalty", "frequency_penalty"), " (the provider refuses the penalties a copying reply's retry sets)"),
)
_REFUSAL_HINTS = ("content_filter", "content_policy", "content policy", "safety", "refus", "moderation")


def default_client_factory(config: ModelConfig, api_key: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=config.base_url, api_key=api_key, max_retries=0, timeout=config.timeout_ms / 1000
    )


def stage_of(request: Any) -> str:
    """``"story.plan_cycle"`` → ``"story"``: the stage map is keyed by the purpose's first segment."""
    return str(request.purpose).split(".")[0]


class ModelGateway(Structured):
    """Implements ``complete(request) -> ModelResult`` (and, through ``Structured``, the one
    ``complete_struct`` loop) for every configured stage."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        env: Mapping[str, str] | None = None,
        client_factory: ClientFactory | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        """``clock``, ``sleep`` and ``rng`` drive the retries' waits and the circuit breakers
        (``app.llm.retry``); tests pass fakes so they are deterministic and instant."""
        self._settings = settings
        self._retrier = Retrier(clock=clock, sleep=sleep, rng=rng)
        for config_id in settings.models:
            record_circuit_open(config_id, False)  # every configured model shows in the gauge
        self._env = os.environ if env is None else env
        self._factory = client_factory or default_client_factory
        self._clients: dict[str, Any] = {}

    def is_configured(self, stage: str) -> bool:
        return self._settings.model_for(stage) is not None

    def config_for(self, request: Any) -> ModelConfig:
        config_id = getattr(request, "model_config_id", None)
        if config_id:
            config = self._settings.models.get(config_id)
            if config is None:
                raise ModelNotConfigured(stage_of(request), config_id=config_id)
            return config
        stage = stage_of(request)
        config = self._settings.model_for(stage)
        if config is None:
            raise ModelNotConfigured(stage)
        return config

    def _client(self, config: ModelConfig) -> Any:
        client = self._clients.get(config.id)
        if client is None:
            # Local OpenAI-compatible servers need no key, but the client insists on one.
            key = self._env.get(config.api_key_env, "") if config.api_key_env else ""
            client = self._clients[config.id] = self._factory(config, key or "not-needed")
        return client

    async def aclose(self) -> None:
        for client in self._clients.values():
            close = getattr(client, "close", None)
            if close is not None:
                await close()
        self._clients.clear()

    def circuit_states(self) -> dict[str, CircuitState]:
        """Every configured model config id → its circuit breaker's state (``/readyz`` shows them)."""
        return {config_id: self._retrier.state(config_id) for config_id in sorted(self._settings.models)}

    @observed_model_call
    async def complete(self, request: Any) -> ModelResult:
        config = self.config_for(request)
        messages, kwargs, timeout_s = _request_kwargs(config, request)
        client = self._client(config)

        async def attempt(seconds: float, number: int) -> ModelResult:
            # Overall deadline: the HTTP timeout is per read, a trickling server could exceed it.
            # CancelledError is not caught anywhere here, so cancelling the caller aborts the call.
            with _mapped_errors(config, timeout_s):
                async with asyncio.timeout(seconds):
                    response = await client.chat.completions.create(**_with_timeout(kwargs, seconds, number))
            return _result(config, messages, response)

        result, retries = await self._retrier.run(config, timeout_s, attempt)
        return msgspec.structs.replace(result, retries=retries) if retries else result

    @observed_model_call
    async def stream(self, request: Any, on_delta: OnDelta) -> ModelResult:
        """``complete``, with the text handed to ``on_delta`` piece by piece as the server sends it.

        Same request, deadline, retries and error tree as ``complete``, except that a stream is
        retried only while no delta has been sent: a failure after some deltas raises the named
        error (the deltas already sent are then a discarded draft). An empty stream is retried
        too, and returned as is when no retry is left. A model config with ``stream = false``
        makes one plain call and sends its text as one delta.
        """
        config = self.config_for(request)
        if not config.stream:
            result = await self.complete(request)
            if result.text:
                await on_delta(result.text)
            return result
        messages, kwargs, timeout_s = _request_kwargs(config, request)
        kwargs["stream"] = True
        kwargs["stream_options"] = {"include_usage": True}
        client = self._client(config)
        started = time.perf_counter()
        sent = False
        spent = Usage()  # tokens of empty answers that were asked again

        async def attempt(seconds: float, number: int) -> ModelResult:
            nonlocal sent, spent
            collected = _Collected()
            with _mapped_errors(config, timeout_s):
                async with asyncio.timeout(seconds):
                    chunks = await client.chat.completions.create(**_with_timeout(kwargs, seconds, number))
                    try:
                        async for chunk in chunks:
                            piece = collected.add(chunk)
                            if not piece:
                                continue
                            if collected.first_token_ms is None:
                                collected.first_token_ms = round((time.perf_counter() - started) * 1000, 3)
                            sent = True
                            try:
                                await on_delta(piece)
                            except Exception as exc:  # the consumer's error, not the model's
                                raise _DeltaFailed(exc) from exc
                    finally:
                        close = getattr(chunks, "close", None)
                        if close is not None:
                            await close()
            result = collected.result(config, messages)
            if not result.text and result.finish_reason == "stop":
                spent = add_usage(spent, result.usage)
                raise RetryableAnswer(result, "empty_stream")
            return result

        try:
            result, retries = await self._retrier.run(config, timeout_s, attempt, kind="stream", can_retry=lambda: not sent)
        except _DeltaFailed as failed:
            raise failed.error from None
        if not retries:
            return result
        usage = add_usage(spent, result.usage) if result.text else spent
        return msgspec.structs.replace(result, retries=retries, usage=usage)


class _DeltaFailed(Exception):
    """Carries an ``on_delta`` error past the model-error mapping unchanged."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class _Collected:
    """What a chat-completions stream said so far: text, refusal, finish reason, usage, model."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.refusal: list[str] = []
        self.finish_reason: str | None = None
        self.usage: Any = None
        self.model: str | None = None
        self.first_token_ms: float | None = None

    def add(self, chunk: Any) -> str:
        """Record one chunk; return its text delta ("" if none)."""
        self.model = self.model or getattr(chunk, "model", None)
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.usage = usage
        choices = getattr(chunk, "choices", None) or []
        if not choices:
            return ""
        choice = choices[0]
        self.finish_reason = getattr(choice, "finish_reason", None) or self.finish_reason
        delta = getattr(choice, "delta", None)
        refusal = getattr(delta, "refusal", None)
        if refusal:
            self.refusal.append(refusal)
        piece = getattr(delta, "content", None) or ""
        if piece:
            self.parts.append(piece)
        return piece

    def result(self, config: ModelConfig, messages: list[dict[str, str]]) -> ModelResult:
        if self.refusal:
            raise ModelRefused(f"model {config.id} refused: {''.join(self.refusal)}", details=_d(config))
        if self.finish_reason == "content_filter":
            raise ModelRefused(f"model {config.id} output was blocked by a content filter", details=_d(config))
        if self.finish_reason is None:
            raise ModelUnavailable(
                f"model {config.id}: the stream ended before the model finished",
                details=_d(config, streamed=True, transient="stream_cut"),
            )
        text = "".join(self.parts)
        return ModelResult(
            text=text,
            usage=_usage_of(self.usage, messages, text),
            model=self.model or config.model,
            finish_reason=self.finish_reason,
            first_token_ms=self.first_token_ms,
        )


def _usage_of(usage: Any, messages: list[dict[str, str]], text: str) -> Usage:
    """The server's usage, or an estimate marked ``estimated`` when it sent none."""
    if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
        return Usage(
            input_tokens=int(usage.prompt_tokens or 0),
            output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        )
    return estimate_usage((m["content"] for m in messages), text)


def _request_kwargs(config: ModelConfig, request: Any) -> tuple[list[dict[str, str]], dict[str, Any], float]:
    """(messages, ``chat.completions.create`` kwargs, overall deadline in seconds) for a request."""
    messages = [{"role": m.role, "content": m.content} for m in request.messages]
    kwargs: dict[str, Any] = {"model": config.model, "messages": messages}
    schema = getattr(request, "response_schema", None)
    if schema is not None:
        _apply_schema(kwargs, config, schema.name, schema.schema)
    temperature = _first(getattr(request, "temperature", None), config.temperature)
    if temperature is not None:
        kwargs["temperature"] = temperature
    for penalty in ("presence_penalty", "frequency_penalty"):
        if (value := getattr(request, penalty, None)) is not None:
            kwargs[penalty] = value
    # The config's budget caps every call of that model (a small local server has a small context).
    budgets = [b for b in (getattr(request, "max_tokens", None), config.max_tokens) if b is not None]
    if budgets:
        kwargs["max_tokens"] = min(budgets)
    timeout_s = _first(getattr(request, "timeout_s", None), config.timeout_ms / 1000)
    kwargs["timeout"] = timeout_s
    return messages, kwargs, timeout_s


@contextlib.contextmanager
def _mapped_errors(config: ModelConfig, timeout_s: float) -> Iterator[None]:
    """Every ``openai`` failure (before or during a stream) as the app's named model errors.
    Wrap it around ``asyncio.timeout`` so the overall deadline maps too."""
    try:
        yield
    except TimeoutError:
        raise ModelTimeout(f"model {config.id} did not answer within {timeout_s:g}s", details=_d(config)) from None
    except openai.APITimeoutError:
        raise ModelTimeout(f"model {config.id} timed out", details=_d(config)) from None
    except openai.APIConnectionError as exc:
        raise ModelUnavailable(f"cannot reach model {config.id}: {exc}", details=_d(config)) from None
    except openai.APIStatusError as exc:
        raise _status_error(config, exc) from None
    except openai.APIError as exc:  # an error event inside a stream that had started
        raise _stream_error(config, exc) from None
    except openai.OpenAIError as exc:
        raise UpstreamError(f"model {config.id} failed: {exc}", details=_d(config)) from None


def _with_timeout(kwargs: dict[str, Any], seconds: float, number: int) -> dict[str, Any]:
    """A retry's HTTP timeout is what is left of the call's deadline."""
    return kwargs if number == 1 else {**kwargs, "timeout": max(0.001, seconds)}


def _stream_error(config: ModelConfig, exc: openai.APIError) -> Exception:
    details = _d(config, streamed=True)
    text = f"{getattr(exc, 'code', '') or ''} {exc.message}".lower()
    if any(hint in text for hint in _REFUSAL_HINTS):
        return ModelRefused(f"model {config.id} refused the request: {exc.message}", details=details)
    if _CONTEXT_OVERFLOW.search(text):
        return ModelContextOverflow(
            f"model {config.id}: the request does not fit the model's context: {exc.message}. "
            f"Lower llm.models.{config.id}.maxTokens or use a model with a larger context.",
            details=details,
        )
    return ModelUnavailable(f"model {config.id} failed mid-stream: {exc.message}", details={**details, "transient": "stream_error"})


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _d(config: ModelConfig, **extra: Any) -> dict[str, Any]:
    return {"modelConfig": config.id, "model": config.model, **extra}


def _apply_schema(kwargs: dict[str, Any], config: ModelConfig, name: str, schema: dict[str, Any]) -> None:
    """Ask for JSON the strongest way the provider supports; weaker modes get the schema as text."""
    if config.structured_output == "json_schema":
        kwargs["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": schema, "strict": True},
        }
        return
    if config.structured_output == "json_object":
        kwargs["response_format"] = {"type": "json_object"}
    instruction = schema_instruction(name, schema)
    messages = kwargs["messages"]
    if messages and messages[0]["role"] == "system":
        messages[0] = {"role": "system", "content": messages[0]["content"] + "\n\n" + instruction}
    else:
        messages.insert(0, {"role": "system", "content": instruction})


def _status_error(config: ModelConfig, exc: openai.APIStatusError) -> Exception:
    status = exc.status_code
    details = _d(config, status=status)
    text = f"{getattr(exc, 'code', '') or ''} {exc.message}".lower()
    if status == 408 or status == 429 or status >= 500:
        retry_after = parse_retry_after(getattr(getattr(exc, "response", None), "headers", None))
        if retry_after is not None:
            details["retryAfterS"] = round(retry_after, 3)
        err = (ModelTimeout(f"model {config.id} timed out (HTTP 408)", details=details) if status == 408
               else ModelUnavailable(f"model {config.id} is unavailable (HTTP {status}): {exc.message}", details=details))  # fmt: skip
        err.retry_after_s = retry_after
        return err
    if any(hint in text for hint in _REFUSAL_HINTS):
        return ModelRefused(f"model {config.id} refused the request: {exc.message}", details=details)
    if status in (401, 403, 404):
        err = ModelUnavailable(f"model {config.id} rejected our credentials or model name (HTTP {status})", details=details)
        err.retryable = False
        return err
    if _CONTEXT_OVERFLOW.search(text):
        return ModelContextOverflow(
            f"model {config.id}: the request does not fit the model's context (HTTP {status}): {exc.message}. "
            f"Lower llm.models.{config.id}.maxTokens or use a model with a larger context.",
            details=details,
        )
    hint = next((h for words, h in _PARAMETER_HINTS if any(w in text for w in words)), "")
    hint = hint.format(id=config.id)
    return UpstreamError(
        f"model {config.id} rejected the request (HTTP {status}): {exc.message}{hint}",
        code="model_request_rejected",
        details=details,
    )


def _result(config: ModelConfig, messages: list[dict[str, str]], response: Any) -> ModelResult:
    choices = getattr(response, "choices", None) or []
    choice = choices[0] if choices else None
    message = getattr(choice, "message", None)
    finish_reason = getattr(choice, "finish_reason", None)
    refusal = getattr(message, "refusal", None)
    if refusal:
        raise ModelRefused(f"model {config.id} refused: {refusal}", details=_d(config))
    if finish_reason == "content_filter":
        raise ModelRefused(f"model {config.id} output was blocked by a content filter", details=_d(config))
    # Empty content is returned as is: complete_struct treats it as invalid output and repairs.
    text = getattr(message, "content", None) or ""
    usage = getattr(response, "usage", None)
    if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
        result_usage = Usage(
            input_tokens=int(usage.prompt_tokens or 0),
            output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        )
    else:
        result_usage = estimate_usage((m["content"] for m in messages), text)
    return ModelResult(
        text=text,
        usage=result_usage,
        model=getattr(response, "model", None) or config.model,
        finish_reason=finish_reason,
    )
