"""Model configs and the stage → model-config map.

Why a separate typed object: the gateway, the prompt templates and start-up validation all need
the same view of "which model serves which stage", and an invalid value must stop start-up with
one message naming the setting (``SettingsError("llm.models.fast.timeoutMs", ...)``) instead of
failing on the first chat turn. API keys are *not* stored here: a config only names the
environment variable that holds its key, so settings can be logged or printed safely.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urlparse

import msgspec

from app.errors import SettingsError

STAGES: tuple[str, ...] = (
    "intent",
    "emotion",
    "select",
    "combined",
    "actor",
    "cross_reply",
    "quality",
    "story",
    "story_init",
    "auto_reply",
)
DEFAULT_MODEL_ID = "default"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
# json_schema: response_format with the strict schema (OpenAI, llama.cpp, vLLM); json_object: JSON
# mode plus the schema in the prompt; prompt: the schema in the prompt only. "none" is the old
# name of "prompt" and still accepted.
STRUCTURED_OUTPUT_MODES = ("json_schema", "json_object", "prompt", "none")

StructuredOutput = Literal["json_schema", "json_object", "prompt", "none"]


class RetryPolicy(msgspec.Struct, frozen=True, kw_only=True):
    """Retries of one model call after a transient error (``app.llm.retry``): at most
    ``max_attempts`` tries in all, waiting a full-jitter exponential backoff (``base_delay_ms``
    doubling per retry, at most ``max_delay_ms``) or the server's ``Retry-After``, whichever is
    longer, and never past the call's deadline. ``max_attempts = 1`` turns retries off."""

    max_attempts: int = 4
    base_delay_ms: int = 250
    max_delay_ms: int = 4_000


class CircuitPolicy(msgspec.Struct, frozen=True, kw_only=True):
    """The circuit breaker of one model config (``app.llm.circuit``): ``failures`` calls in a row
    that failed on transient errors open it for ``cooldown_ms`` (doubling while the probe keeps
    failing, up to ``app.llm.circuit.MAX_COOLDOWN_FACTOR`` times that); ``failures = 0`` turns it off."""

    failures: int = 10
    cooldown_ms: int = 5_000


class ModelConfig(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    base_url: str
    model: str
    api_key_env: str | None = None  # name of the env var holding the key; None → no key needed
    structured_output: StructuredOutput = "json_schema"
    timeout_ms: int = 30_000
    temperature: float | None = None
    max_tokens: int | None = None
    stream: bool = True  # replies stream token by token; false for servers that cannot stream
    retry: RetryPolicy = msgspec.field(default_factory=RetryPolicy)
    circuit: CircuitPolicy = msgspec.field(default_factory=CircuitPolicy)


class LLMSettings(msgspec.Struct, frozen=True, kw_only=True):
    models: dict[str, ModelConfig] = msgspec.field(default_factory=dict)
    stages: dict[str, str] = msgspec.field(default_factory=dict)  # stage → model config id
    prompts: dict[str, str] = msgspec.field(default_factory=dict)  # template name → override text

    def model_for(self, stage: str) -> ModelConfig | None:
        model_id = self.stages.get(stage)
        return self.models.get(model_id) if model_id is not None else None


# TOML key → (field name, checker). Checkers return the cleaned value or raise ValueError(problem).
def _str(v: Any) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ValueError("must be a non-empty string")
    return v.strip()


def _url(v: Any) -> str:
    v = _str(v)
    parsed = urlparse(v)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(f"must be an http(s) URL, got {v!r}")
    return v.rstrip("/")


def _mode(v: Any) -> str:
    if v not in STRUCTURED_OUTPUT_MODES:
        raise ValueError(f"must be one of json_schema, json_object, prompt, got {v!r}")
    return "prompt" if v == "none" else v


def _timeout(v: Any) -> int:
    v = _int(v)
    if not 1 <= v <= 600_000:
        raise ValueError("must be between 1 and 600000 milliseconds")
    return v


def _int(v: Any) -> int:
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"must be an integer, got {v!r}")
    return v


def _max_tokens(v: Any) -> int:
    v = _int(v)
    if not 1 <= v <= 1_000_000:
        raise ValueError("must be a positive integer")
    return v


def _bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("true", "false", "1", "0", "yes", "no", "on", "off"):
        return v.strip().lower() in ("true", "1", "yes", "on")
    raise ValueError(f"must be true or false, got {v!r}")


def _temperature(v: Any) -> float:
    try:
        f = float(v) if not isinstance(v, bool) else None
    except (TypeError, ValueError):
        f = None
    if f is None or not 0.0 <= f <= 2.0:
        raise ValueError(f"must be a number between 0 and 2, got {v!r}")
    return f


class _SubkeyProblem(ValueError):
    """A problem with one key of a sub-table (``retry.maxAttempts``): the setting names that key."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(problem)
        self.key = key


def _ranged(lo: int, hi: int, unit: str = "") -> Any:
    def check(v: Any) -> int:
        v = _int(v)
        if not lo <= v <= hi:
            raise ValueError(f"must be between {lo} and {hi}{unit}, got {v}")
        return v

    return check


_RETRY_KEYS: dict[str, tuple[str, Any]] = {
    "maxAttempts": ("max_attempts", _ranged(1, 10)),
    "baseDelayMs": ("base_delay_ms", _ranged(0, 60_000, " milliseconds")),
    "maxDelayMs": ("max_delay_ms", _ranged(0, 300_000, " milliseconds")),
}
_CIRCUIT_KEYS: dict[str, tuple[str, Any]] = {
    "failures": ("failures", _ranged(0, 1000)),
    "cooldownMs": ("cooldown_ms", _ranged(100, 3_600_000, " milliseconds")),
}


def _sub_table(keys: dict[str, tuple[str, Any]], v: Any) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise ValueError(f"must be a table with keys {', '.join(keys)}")
    fields: dict[str, Any] = {}
    for key, value in v.items():
        if key not in keys:
            raise _SubkeyProblem(key, f"unknown key; expected one of {', '.join(keys)}")
        name, check = keys[key]
        try:
            fields[name] = check(value)
        except ValueError as exc:
            raise _SubkeyProblem(key, str(exc)) from None
    return fields


def _retry(v: Any) -> RetryPolicy:
    policy = RetryPolicy(**_sub_table(_RETRY_KEYS, v))
    if policy.max_delay_ms < policy.base_delay_ms:
        raise _SubkeyProblem("maxDelayMs", f"must be at least baseDelayMs ({policy.base_delay_ms})")
    return policy


def _circuit(v: Any) -> CircuitPolicy:
    return CircuitPolicy(**_sub_table(_CIRCUIT_KEYS, v))


_MODEL_KEYS: dict[str, tuple[str, Any]] = {
    "baseUrl": ("base_url", _url),
    "model": ("model", _str),
    "apiKeyEnv": ("api_key_env", _str),
    "structuredOutput": ("structured_output", _mode),
    "timeoutMs": ("timeout_ms", _timeout),
    "temperature": ("temperature", _temperature),
    "maxTokens": ("max_tokens", _max_tokens),
    "stream": ("stream", _bool),
    "retry": ("retry", _retry),
    "circuit": ("circuit", _circuit),
}

# Shortcut env var → TOML key of the `default` model config.
_ENV_KEYS = {
    "COMPANION_LLM_BASE_URL": "baseUrl",
    "COMPANION_LLM_MODEL": "model",
    "COMPANION_LLM_STRUCTURED_OUTPUT": "structuredOutput",
    "COMPANION_LLM_TIMEOUT_MS": "timeoutMs",
    "COMPANION_LLM_MAX_TOKENS": "maxTokens",
    "COMPANION_LLM_TEMPERATURE": "temperature",
    "COMPANION_LLM_STREAM": "stream",
}


def _table(value: Any, name: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SettingsError(name, "must be a table")
    return value


def _model_config(model_id: str, raw: dict[str, Any], sources: dict[str, str], env: Mapping[str, str]) -> ModelConfig:
    """Build one config; ``sources`` maps a TOML key to the setting name to blame (env or TOML)."""
    fields: dict[str, Any] = {}
    for key, value in raw.items():
        setting = sources.get(key, f"llm.models.{model_id}.{key}")
        if key not in _MODEL_KEYS:
            raise SettingsError(setting, f"unknown key; expected one of {', '.join(_MODEL_KEYS)}")
        name, check = _MODEL_KEYS[key]
        try:
            fields[name] = check(value)
        except _SubkeyProblem as exc:
            raise SettingsError(f"{setting}.{exc.key}", str(exc)) from None
        except ValueError as exc:
            raise SettingsError(setting, str(exc)) from None
    if "model" not in fields:
        raise SettingsError(sources.get("model", f"llm.models.{model_id}.model"), "is required")
    key_env = fields.get("api_key_env")
    if key_env is not None and not env.get(key_env):
        setting = sources.get("apiKeyEnv", f"llm.models.{model_id}.apiKeyEnv")
        raise SettingsError(setting, f"environment variable {key_env} is not set")
    fields.setdefault("base_url", DEFAULT_BASE_URL)
    return ModelConfig(id=model_id, **fields)


def _env_default(env: Mapping[str, str], toml_default: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]] | None:
    """The `default` config from the shortcut env vars (overriding a TOML `default`), if any."""
    given = {toml_key: env[name] for name, toml_key in _ENV_KEYS.items() if env.get(name)}
    if not given:
        return None
    raw = {**toml_default, **given}
    sources = {toml_key: name for name, toml_key in _ENV_KEYS.items() if name in env}
    if "model" not in raw:
        sources["model"] = "COMPANION_LLM_MODEL"
    if "apiKeyEnv" not in raw:
        for name in ("COMPANION_LLM_API_KEY", "OPENAI_API_KEY"):
            if env.get(name):
                raw["apiKeyEnv"] = name
                break
    return raw, sources


def load_llm_settings(env: Mapping[str, str], toml: Mapping[str, Any]) -> LLMSettings:
    """Read ``[llm.models.*]``, ``[llm.stages]``, ``[llm.prompts]`` and the shortcut env vars.

    With nothing configured there are no models and every stage is unconfigured; the app then
    uses offline fallbacks or answers 503 ``model_not_configured`` (never invented output).
    """
    llm = _table(toml.get("llm"), "llm")
    for key in llm:
        if key not in ("models", "stages", "prompts"):
            raise SettingsError(f"llm.{key}", "unknown key; expected models, stages or prompts")

    raw_models = _table(llm.get("models"), "llm.models")
    models: dict[str, ModelConfig] = {}
    for model_id, raw in raw_models.items():
        raw = _table(raw, f"llm.models.{model_id}")
        if model_id == DEFAULT_MODEL_ID and _env_default(env, raw) is not None:
            continue  # built below from env + TOML together
        models[model_id] = _model_config(model_id, raw, {}, env)
    env_default = _env_default(env, _table(raw_models.get(DEFAULT_MODEL_ID), "llm.models.default"))
    if env_default is not None:
        models[DEFAULT_MODEL_ID] = _model_config(DEFAULT_MODEL_ID, *env_default, env)

    stages: dict[str, str] = {}
    for stage, model_id in _table(llm.get("stages"), "llm.stages").items():
        if stage not in STAGES:
            raise SettingsError(f"llm.stages.{stage}", f"unknown stage; expected one of {', '.join(STAGES)}")
        if not isinstance(model_id, str) or model_id not in models:
            known = ", ".join(sorted(models)) or "none defined"
            raise SettingsError(f"llm.stages.{stage}", f"unknown model config {model_id!r} (known: {known})")
        stages[stage] = model_id
    if DEFAULT_MODEL_ID in models:
        for stage in STAGES:
            stages.setdefault(stage, DEFAULT_MODEL_ID)

    prompts: dict[str, str] = {}
    for name, text in _table(llm.get("prompts"), "llm.prompts").items():
        if not isinstance(text, str) or not text.strip():
            raise SettingsError(f"llm.prompts.{name}", "must be a non-empty string")
        prompts[name] = text
    return LLMSettings(models=models, stages=stages, prompts=prompts)
