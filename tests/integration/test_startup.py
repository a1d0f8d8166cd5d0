from __future__ import annotations

import pytest
from click.testing import CliRunner

from app.cli import main
from app.db.engine import create_engine
from app.main import UnmigratedDatabase, prepare_database
from app.settings import load_settings


async def test_embedded_sqlite_is_migrated_on_start(tmp_path) -> None:
    settings = load_settings({"COMPANION_DATA_DIR": str(tmp_path)})
    engine = create_engine(settings.database_url)
    try:
        await prepare_database(settings, engine)
        from app.db.migrate import is_at_head

        assert await is_at_head(engine)
    finally:
        await engine.dispose()


async def test_unmigrated_external_database_is_refused(empty_db_url: str, tmp_path) -> None:
    if empty_db_url.startswith("sqlite"):
        pytest.skip("only external (PostgreSQL) databases are refused; embedded SQLite is migrated")
    settings = load_settings({"COMPANION_DATA_DIR": str(tmp_path), "COMPANION_DATABASE_URL": empty_db_url})
    engine = create_engine(empty_db_url)
    try:
        with pytest.raises(UnmigratedDatabase, match="companion migrate"):
            await prepare_database(settings, engine)
    finally:
        await engine.dispose()


def test_token_command_prints_a_verifiable_token(tmp_path, monkeypatch) -> None:
    from app.auth.tokens import verify_token

    monkeypatch.setenv("COMPANION_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("COMPANION_JWT_SECRET", "x" * 32)
    result = CliRunner().invoke(main, ["token", "--user", "alice", "--admin", "--ttl", "2h"])
    assert result.exit_code == 0, result.output
    principal = verify_token("x" * 32, result.output.strip())
    assert principal.user_id == "alice" and principal.is_admin
    bad = CliRunner().invoke(main, ["token", "--user", "alice", "--ttl", "soon"])
    assert bad.exit_code != 0 and "invalid TTL" in bad.output


def test_migrate_command_upgrades_configured_database(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COMPANION_DATA_DIR", str(tmp_path))
    result = CliRunner().invoke(main, ["migrate"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "companion.db").exists()


def test_invalid_setting_stops_start_up_naming_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COMPANION_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("COMPANION_PORT", "eighty")
    result = CliRunner().invoke(main, ["serve"])
    assert result.exit_code != 0 and "COMPANION_PORT" in result.output
