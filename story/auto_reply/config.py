"""Auto-reply configuration (``settings.autoReply``) and its ranges.

Ranges come from the suggested-replies spec; they are checked in ``__post_init__`` so that a
config built in code, converted from a dict or decoded from JSON is valid in every case, and
every bad field is named at once (the app answers 422 with the whole list).
"""

from __future__ import annotations

import math
from typing import Any, Literal, Mapping

import msgspec

from .errors import AutoReplyConfigInvalid

Fallback = Literal["none", "conservative"]

# camelCase field -> (attribute, low, high)
RANGES: dict[str, tuple[str, float, float]] = {
    "suggestionCount": ("suggestion_count", 2, 4),
    "contextMessageCount": ("context_message_count", 2, 6),
    "maxSuggestionChars": ("max_suggestion_chars", 32, 300),
    "maxTokens": ("max_tokens", 64, 1024),
    "timeoutMs": ("timeout_ms", 1000, 30000),
    "temperature": ("temperature", 0, 2),
}


class AutoReplyConfig(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    enabled: bool = True
    model_config_id: str | None = None
    suggestion_count: int = 3
    context_message_count: int = 6
    max_suggestion_chars: int = 160
    max_tokens: int = 384
    timeout_ms: int = 15000
    temperature: float = 0.7
    fallback: Fallback = "none"

    def __post_init__(self) -> None:
        problems = config_problems(self)
        if problems:
            raise AutoReplyConfigInvalid(problems)

    @property
    def timeout_s(self) -> float:
        return self.timeout_ms / 1000


def config_problems(config: AutoReplyConfig) -> dict[str, str]:
    """Every out-of-range or mistyped field, keyed by its JSON (camelCase) name."""
    problems: dict[str, str] = {}
    for field, (attr, low, high) in RANGES.items():
        value = getattr(config, attr)
        is_float_field = field == "temperature"
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not numeric or (not is_float_field and not isinstance(value, int)):
            problems[field] = f"must be {'a number' if is_float_field else 'an integer'} (got {value!r})"
        elif not math.isfinite(value) or not low <= value <= high:
            problems[field] = f"must be between {_fmt(low)} and {_fmt(high)} (got {value!r})"
    if config.fallback not in ("none", "conservative"):
        problems["fallback"] = f"must be 'none' or 'conservative' (got {config.fallback!r})"
    if not isinstance(config.enabled, bool):
        problems["enabled"] = f"must be true or false (got {config.enabled!r})"
    if config.model_config_id is not None and not (
        isinstance(config.model_config_id, str) and config.model_config_id.strip()
    ):
        problems["modelConfigId"] = "must be a non-empty string when given"
    return problems


def validate_config(data: AutoReplyConfig | Mapping[str, Any] | bytes | str | None = None) -> AutoReplyConfig:
    """Build a config from JSON or a camelCase mapping, raising ``AutoReplyConfigInvalid``.

    Type and unknown-field errors from msgspec are reported through the same typed error, so
    callers need to handle one exception.
    """
    if data is None:
        return AutoReplyConfig()
    if isinstance(data, AutoReplyConfig):
        return data
    try:
        if isinstance(data, (bytes, str)):
            return msgspec.json.decode(data, type=AutoReplyConfig)
        return msgspec.convert(dict(data), AutoReplyConfig)
    except msgspec.ValidationError as exc:
        if isinstance(exc.__cause__, AutoReplyConfigInvalid):
            raise exc.__cause__ from None
        message = str(exc)
        field = _path_field(message)
        if "unknown field" in message:
            raise AutoReplyConfigInvalid({field: "is not a known field"}) from exc
        raise AutoReplyConfigInvalid({field: f"is invalid: {message.split(' - at ')[0]}"}) from exc
    except msgspec.DecodeError as exc:
        raise AutoReplyConfigInvalid({"config": f"is not valid JSON ({exc})"}) from exc


def _path_field(message: str) -> str:
    if "unknown field `" in message:
        return message.split("unknown field `", 1)[1].split("`", 1)[0]
    marker = "`$."
    if marker in message:
        return message.split(marker, 1)[1].split("`", 1)[0].split("[", 1)[0]
    return "config"


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)
