"""The ``companion`` command line."""

from __future__ import annotations

import asyncio
import sys

import click

from app.errors import SettingsError


def _settings():
    from app.settings import load_settings

    try:
        return load_settings()
    except SettingsError as exc:
        raise click.ClickException(exc.message) from None


@click.group()
def main() -> None:
    """AI-companion group-chat backend."""
    from app.logs import configure_logging

    configure_logging()  # text, or JSON lines with COMPANION_LOG_FORMAT=json; third-party chatter quiet


@main.command()
@click.option("--host", default=None, help="Bind address (default: COMPANION_HOST or 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port (default: COMPANION_PORT or 8000).")
def serve(host: str | None, port: int | None) -> None:
    """Run the HTTP server. Migrates the embedded SQLite database on start."""
    import uvicorn

    from app.db.engine import create_engine
    from app.main import UnmigratedDatabase, create_app, prepare_database

    settings = _settings()
    from app.logs import configure_logging

    configure_logging(settings.log_level, settings.log_format)

    async def check() -> None:
        engine = create_engine(settings.database_url)
        try:
            await prepare_database(settings, engine)
        finally:
            await engine.dispose()

    try:
        asyncio.run(check())
    except UnmigratedDatabase as exc:
        raise click.ClickException(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - one line naming the setting, not a traceback
        raise click.ClickException(_database_problem(settings.database_url, exc)) from None
    if not settings.llm.models:
        click.echo("no LLM configured: stages with an offline fallback use it; the others answer 503 model_not_configured")
    # Open SSE streams (``GET …/events`` follows live) would hold a graceful shutdown forever:
    # after 5 s they are closed; a client reconnects with Last-Event-ID and misses nothing.
    uvicorn.run(create_app(settings), host=host or settings.host, port=port or settings.port, log_level="info",
                log_config=None, timeout_graceful_shutdown=5)  # uvicorn's lines go through our handler and format


def _database_problem(url: str, exc: BaseException) -> str:
    from sqlalchemy.engine import make_url

    from app.db.outage import outage_reason

    shown = make_url(url).render_as_string(hide_password=True)
    reason = outage_reason(exc) or type(exc).__name__
    detail = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
    return f"cannot use the database at {shown} (COMPANION_DATABASE_URL): {reason.replace('_', ' ')}: {detail}"


@main.command()
@click.option("--revision", default="head", show_default=True)
def migrate(revision: str) -> None:
    """Upgrade the configured database (SQLite or PostgreSQL) to a revision."""
    from app.db.migrate import upgrade_sync

    settings = _settings()
    try:
        upgrade_sync(settings.database_url, revision)
    except Exception as exc:  # noqa: BLE001 - one line naming the setting, not a traceback
        raise click.ClickException(_database_problem(settings.database_url, exc)) from None
    click.echo(f"database upgraded to {revision}")


@main.command()
@click.option("--user", required=True, help="User id (the token's 'sub').")
@click.option("--admin", is_flag=True, help="Grant the admin scope.")
@click.option("--ttl", default="1d", show_default=True, help="Lifetime: 90s, 15m, 12h, 1d ...")
def token(user: str, admin: bool, ttl: str) -> None:
    """Print a bearer token for local use."""
    from app.auth.tokens import issue_token, parse_ttl

    settings = _settings()
    try:
        seconds = parse_ttl(ttl)
        click.echo(issue_token(settings.jwt_secret, user, admin=admin, ttl_s=seconds))
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None


@main.command()
@click.option("--simulate", is_flag=True, help="Start the LLM simulator and use it (output is simulated).")
def demo(simulate: bool) -> None:
    """Run a scripted five-turn group session in-process on a temporary SQLite and explain it."""
    from app.demo import main as run

    run(simulate, click.echo)


def _register_optional() -> None:
    try:
        from app.llm.simulator.cli import simulate_llm
    except ImportError:  # pragma: no cover - during partial installs
        return
    main.add_command(simulate_llm, "simulate-llm")
    from analytics.cli import analytics, tune

    main.add_command(analytics, "analytics")
    main.add_command(tune, "tune")


_register_optional()

if __name__ == "__main__":
    sys.exit(main())
