from __future__ import annotations

from pathlib import Path

import pytest

from app.errors import SettingsError
from app.settings import load_settings


def test_no_configuration_gives_embedded_sqlite_and_persisted_dev_secret(tmp_path: Path) -> None:
    env = {"COMPANION_DATA_DIR": str(tmp_path)}
    first = load_settings(env)
    assert first.database_url.startswith("sqlite+aiosqlite:///") and first.is_embedded_sqlite
    assert first.jwt_secret_generated
    assert load_settings(env).jwt_secret == first.jwt_secret
    assert first.llm.models == {} or not first.llm.models


def test_environment_overrides_toml(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[server]\nport = 9000\nhost = "0.0.0.0"\n[limits]\nmaxMessageChars = 100\n')
    s = load_settings({"COMPANION_DATA_DIR": str(tmp_path), "COMPANION_CONFIG": str(cfg), "COMPANION_PORT": "9001"})
    assert s.port == 9001 and s.host == "0.0.0.0" and s.limits.max_message_chars == 100


@pytest.mark.parametrize(
    ("env", "setting"),
    [
        ({"COMPANION_PORT": "abc"}, "COMPANION_PORT"),
        ({"COMPANION_PORT": "70000"}, "COMPANION_PORT"),
        ({"COMPANION_DATABASE_URL": "mysql://x"}, "COMPANION_DATABASE_URL"),
        ({"COMPANION_DATABASE_URL": "postgresql://u@h/db"}, "COMPANION_DATABASE_URL"),
        ({"COMPANION_JWT_SECRET": "short"}, "COMPANION_JWT_SECRET"),
        ({"COMPANION_MAX_MESSAGE_CHARS": "0"}, "COMPANION_MAX_MESSAGE_CHARS"),
        ({"COMPANION_LOG_LEVEL": "LOUD"}, "COMPANION_LOG_LEVEL"),
        ({"COMPANION_RECENT_WINDOW": "1"}, "COMPANION_RECENT_WINDOW"),
        ({"COMPANION_SCORING_WEIGHTS": "/nope/weights.json"}, "COMPANION_SCORING_WEIGHTS"),
        ({"COMPANION_CONFIG": "/nope/config.toml"}, "COMPANION_CONFIG"),
    ],
)
def test_invalid_setting_is_named(tmp_path: Path, env: dict[str, str], setting: str) -> None:
    with pytest.raises(SettingsError) as info:
        load_settings({"COMPANION_DATA_DIR": str(tmp_path), **env})
    assert info.value.setting == setting
    assert setting in str(info.value)


def test_broken_toml_is_a_clear_error(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[server\nport=")
    with pytest.raises(SettingsError, match="not valid TOML"):
        load_settings({"COMPANION_DATA_DIR": str(tmp_path), "COMPANION_CONFIG": str(cfg)})


def test_the_readme_settings_example_is_exactly_the_defaults() -> None:
    import json
    from pathlib import Path

    from app.conversations.settings import dump_settings, parse_settings

    readme = (Path(__file__).parents[3] / "README.md").read_text(encoding="utf-8")
    start = readme.index("Conversation settings (all optional")
    block = readme[readme.index("```json\n", start) + len("```json\n"):]
    shown = json.loads(block[: block.index("```")])
    assert shown == dump_settings(parse_settings(None))
