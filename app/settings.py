"""Typed settings, read once at start-up from ``COMPANION_*`` environment variables and an optional
TOML file (``COMPANION_CONFIG``).

Precedence: environment > TOML > defaults. With no configuration at all the server runs on an
embedded SQLite file under ``./.companion/`` with a generated dev JWT secret and no LLM.
Every value is validated here; an invalid one raises :class:`SettingsError` naming the setting.
"""

from __future__ import annotations

import logging
import os
import secrets
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from app.errors import SettingsError

log = logging.getLogger(__name__)

ENV_PREFIX = "COMPANION_"


class Limits(msgspec.Struct, frozen=True):
    """Request and content bounds. Every limit is a named, configurable setting."""

    max_message_chars: int = 4000
    max_body_bytes: int = 64 * 1024
    max_group_members: int = 8
    min_group_members: int = 2
    max_page_size: int = 200
    max_title_chars: int = 200
    max_prompt_chars: int = 8000
    max_message_versions: int = 8  # versions an agent message keeps (regenerate adds one): issue 27
    max_lore_entries: int = 100  # lore entries per conversation and per agent: issue 28
    max_lore_keys: int = 20  # keys (and, apart, secondary keys) per lore entry
    max_lore_key_chars: int = 64
    max_lore_content_chars: int = 2000
    max_auto_turns: int = 20  # turns one auto-mode run may ask for: issue 28
    auto_max_seconds: int = 600  # an auto-mode run ends ``time_limit`` this long after it started


class Settings(msgspec.Struct, frozen=True):
    data_dir: Path
    database_url: str
    jwt_secret: str
    jwt_secret_generated: bool = False
    host: str = "127.0.0.1"
    port: int = 8000
    log_level: str = "INFO"
    limits: Limits = Limits()
    recent_window: int = 12
    cross_reply_rounds: int = 1
    turn_timeout_s: float = 120.0
    turn_speculation: bool = True  # start the fallback scorer's pick while the LLM selector runs
    turn_speculation_extra: int = 1  # also the next-ranked candidates (0..3): more hits, more cancelled calls
    story_initialize_ahead: bool = True  # initialise a Story group's silent agents after a turn, in the background
    quality_check: bool = False  # the LLM quality judge (stage "quality") on every reply: app/turns/judge.py
    scoring_weights_path: Path | None = None
    dev_tokens: bool = False  # POST /v1/dev/token hands out tokens for any user name: development only
    metrics: str = "admin"  # GET /metrics: off | admin (needs an admin token) | open (issue 11)
    log_format: str = "text"  # text | json (one JSON object per line)
    llm: Any = None  # app.llm.config.LLMSettings, loaded lazily to keep this module light

    @property
    def is_embedded_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


# (setting name, env var suffix, toml dotted key, type)
_SCALARS: list[tuple[str, str, str, type]] = [
    ("host", "HOST", "server.host", str),
    ("port", "PORT", "server.port", int),
    ("log_level", "LOG_LEVEL", "server.logLevel", str),
    ("database_url", "DATABASE_URL", "database.url", str),
    ("jwt_secret", "JWT_SECRET", "auth.jwtSecret", str),
    ("recent_window", "RECENT_WINDOW", "turns.recentWindow", int),
    ("cross_reply_rounds", "CROSS_REPLY_ROUNDS", "turns.crossReplyRounds", int),
    ("turn_timeout_s", "TURN_TIMEOUT_S", "turns.timeoutS", float),
    ("turn_speculation", "TURN_SPECULATION", "turns.speculation", bool),
    ("turn_speculation_extra", "TURN_SPECULATION_EXTRA", "turns.speculationExtra", int),
    ("story_initialize_ahead", "STORY_INITIALIZE_AHEAD", "story.initializeAhead", bool),
    ("quality_check", "QUALITY_CHECK", "turns.qualityCheck", bool),
    ("scoring_weights_path", "SCORING_WEIGHTS", "turns.scoringWeights", Path),
    ("dev_tokens", "DEV_TOKENS", "auth.devTokens", bool),
    ("metrics", "METRICS", "server.metrics", str),
    ("log_format", "LOG_FORMAT", "server.logFormat", str),
]
_LIMITS: list[tuple[str, str, str]] = [
    ("max_message_chars", "MAX_MESSAGE_CHARS", "limits.maxMessageChars"),
    ("max_body_bytes", "MAX_BODY_BYTES", "limits.maxBodyBytes"),
    ("max_group_members", "MAX_GROUP_MEMBERS", "limits.maxGroupMembers"),
    ("max_page_size", "MAX_PAGE_SIZE", "limits.maxPageSize"),
    ("max_title_chars", "MAX_TITLE_CHARS", "limits.maxTitleChars"),
    ("max_prompt_chars", "MAX_PROMPT_CHARS", "limits.maxPromptChars"),
    ("max_message_versions", "MAX_MESSAGE_VERSIONS", "limits.maxMessageVersions"),
    ("max_lore_entries", "MAX_LORE_ENTRIES", "limits.maxLoreEntries"),
    ("max_lore_keys", "MAX_LORE_KEYS", "limits.maxLoreKeys"),
    ("max_lore_key_chars", "MAX_LORE_KEY_CHARS", "limits.maxLoreKeyChars"),
    ("max_lore_content_chars", "MAX_LORE_CONTENT_CHARS", "limits.maxLoreContentChars"),
    ("max_auto_turns", "MAX_AUTO_TURNS", "limits.maxAutoTurns"),
    ("auto_max_seconds", "AUTO_MAX_SECONDS", "limits.autoMaxSeconds"),
]


def _dig(table: Mapping[str, Any], dotted: str) -> Any:
    node: Any = table
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _coerce(name: str, raw: Any, kind: type) -> Any:
    try:
        if kind is bool:
            if isinstance(raw, bool):
                return raw
            if str(raw).strip().lower() in {"1", "true", "yes", "on"}:
                return True
            if str(raw).strip().lower() in {"0", "false", "no", "off"}:
                return False
            raise ValueError
        if kind is int:
            if isinstance(raw, bool):
                raise ValueError
            return int(raw)
        if kind is float:
            return float(raw)
        if kind is Path:
            return Path(str(raw)).expanduser()
        return str(raw)
    except (TypeError, ValueError):
        raise SettingsError(name, f"expected {kind.__name__}, got {raw!r}") from None


def _read_toml(env: Mapping[str, str]) -> dict[str, Any]:
    path = env.get(ENV_PREFIX + "CONFIG")
    if not path:
        return {}
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise SettingsError("COMPANION_CONFIG", f"file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError("COMPANION_CONFIG", f"{path} is not valid TOML: {exc}") from None


def _lookup(env: Mapping[str, str], toml: Mapping[str, Any], suffix: str, dotted: str) -> tuple[Any, str] | None:
    if (value := env.get(ENV_PREFIX + suffix)) not in (None, ""):
        return value, ENV_PREFIX + suffix
    if (value := _dig(toml, dotted)) is not None:
        return value, dotted
    return None


def _dev_secret(data_dir: Path) -> str:
    """A per-install dev secret, generated once and persisted so tokens survive restarts."""
    path = data_dir / "jwt-dev-secret"
    if path.exists():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(48)
    path.write_text(secret)
    path.chmod(0o600)
    return secret


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Build and validate the settings. Raises SettingsError naming the first bad setting."""
    env = os.environ if env is None else env
    toml = _read_toml(env)
    found = _lookup(env, toml, "DATA_DIR", "dataDir")
    data_dir = _coerce(found[1], found[0], Path) if found else Path("./.companion")
    values: dict[str, Any] = {}
    for name, suffix, dotted, kind in _SCALARS:
        if (hit := _lookup(env, toml, suffix, dotted)) is not None:
            values[name] = _coerce(hit[1], hit[0], kind)
    limits: dict[str, Any] = {}
    for name, suffix, dotted in _LIMITS:
        if (hit := _lookup(env, toml, suffix, dotted)) is not None:
            limits[name] = _coerce(hit[1], hit[0], int)
            if limits[name] <= 0:
                raise SettingsError(hit[1], "must be a positive integer")
    values["limits"] = Limits(**limits)

    if "database_url" not in values:
        values["database_url"] = f"sqlite+aiosqlite:///{(data_dir / 'companion.db').resolve()}"
    _check_database_url(values["database_url"])
    if "jwt_secret" not in values:
        values["jwt_secret"] = _dev_secret(data_dir)
        values["jwt_secret_generated"] = True
        log.warning("COMPANION_JWT_SECRET is not set: using a generated dev secret stored in %s", data_dir)
    elif len(values["jwt_secret"]) < 16:
        raise SettingsError("COMPANION_JWT_SECRET", "must be at least 16 characters")
    if not 1 <= values.get("port", 8000) <= 65535:
        raise SettingsError("COMPANION_PORT", "must be between 1 and 65535")
    if values.get("log_level", "INFO").upper() not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
        raise SettingsError("COMPANION_LOG_LEVEL", "must be one of DEBUG, INFO, WARNING, ERROR")
    if values.get("metrics", "admin") not in {"off", "admin", "open"}:
        raise SettingsError("COMPANION_METRICS", "must be one of off, admin, open")
    if values.get("log_format", "text") not in {"text", "json"}:
        raise SettingsError("COMPANION_LOG_FORMAT", "must be text or json")
    if not 2 <= values.get("recent_window", 12) <= 200:
        raise SettingsError("COMPANION_RECENT_WINDOW", "must be between 2 and 200")
    if not 0 <= values.get("cross_reply_rounds", 1) <= 3:
        raise SettingsError("COMPANION_CROSS_REPLY_ROUNDS", "must be between 0 and 3")
    if not 0 <= values.get("turn_speculation_extra", 1) <= 3:
        raise SettingsError("COMPANION_TURN_SPECULATION_EXTRA", "must be between 0 and 3")
    if not 1 <= values.get("turn_timeout_s", 120.0) <= 3600:
        raise SettingsError("COMPANION_TURN_TIMEOUT_S", "must be between 1 and 3600 seconds")
    weights = values.get("scoring_weights_path")
    if weights is not None and not weights.is_file():
        raise SettingsError("COMPANION_SCORING_WEIGHTS", f"file not found: {weights}")

    from app.llm.config import load_llm_settings

    values["llm"] = load_llm_settings(env, toml)
    return Settings(data_dir=data_dir, **values)


def _check_database_url(url: str) -> None:
    if url.startswith("sqlite+aiosqlite://") or url.startswith("postgresql+asyncpg://"):
        return
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        raise SettingsError(
            "COMPANION_DATABASE_URL", "use the async driver form postgresql+asyncpg://user@host:port/db"
        )
    raise SettingsError(
        "COMPANION_DATABASE_URL", "must start with sqlite+aiosqlite:// or postgresql+asyncpg://"
    )
