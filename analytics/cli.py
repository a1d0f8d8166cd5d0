"""``companion analytics …`` and ``companion tune …`` (registered in ``app.cli``).

Every command opens the database named by the app settings, so it reads the same data as the
server (point ``COMPANION_DATABASE_URL`` at a read replica to keep load off the primary).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any, TypeVar

import click

from analytics.filters import FilterError, Filters, parse_filters
from analytics.output import FORMATS, render
from analytics.queries import QUERIES, Query
from analytics.tuning.cli import tune

T = TypeVar("T")


def filter_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--since", help="Start: a duration back from now (7d, 12h, 30m, 2w) or an ISO date/time."),
        click.option("--until", help="End (exclusive): a duration back from now or an ISO date/time."),
        click.option("--conversation", multiple=True, help="Conversation id (repeat or comma-separate)."),
        click.option("--agent", multiple=True, help="Agent id (repeat or comma-separate)."),
        click.option("--selected-by", "selected_by", multiple=True, help="Turns decided by mention|llm|fallback|direct."),
        click.option("--kind", type=click.Choice(["direct", "group"]), help="Conversation kind."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def make_filters(**raw: Any) -> Filters:
    try:
        return parse_filters(**raw)
    except FilterError as exc:
        raise click.BadParameter(exc.problem, param_hint=f"--{exc.field}") from None


def run_with_session(work: Callable[[Any], Awaitable[T]], *, migrate_embedded: bool = False) -> T:
    """Open the configured database, run ``work(session)`` and close everything."""
    from app.db.engine import create_engine, session_factory
    from app.db.migrate import is_at_head, upgrade
    from app.errors import SettingsError
    from app.settings import load_settings

    try:
        settings = load_settings()
    except SettingsError as exc:
        raise click.ClickException(exc.message) from None

    async def main() -> T:
        engine = create_engine(settings.database_url)
        try:
            if not await is_at_head(engine):
                if not (migrate_embedded and settings.is_embedded_sqlite):
                    raise click.ClickException("the database is not at the newest migration; run `companion migrate` first")
                await upgrade(settings.database_url)
            async with session_factory(engine)() as session:
                return await work(session)
        finally:
            await engine.dispose()

    return asyncio.run(main())


@click.group()
def analytics() -> None:
    """Queries, report, export and synthetic data over saved selection metadata."""


def _query_command(query: Query) -> click.Command:
    @click.command(name=query.name, help=f"{query.summary}.")
    @filter_options
    @click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
    def command(fmt: str, **raw: Any) -> None:
        filters = make_filters(**raw)
        rows = run_with_session(lambda session: query.run(session, filters))
        click.echo(render(rows, query.row, fmt))

    return command


for _query in QUERIES.values():
    analytics.add_command(_query_command(_query))


@analytics.command()
@filter_options
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="HTML file to write.")
def report(out: Path, **raw: Any) -> None:
    """One self-contained HTML report (tables + charts), readable offline."""
    from analytics.report import STEPS, build_report

    filters = make_filters(**raw)
    with click.progressbar(length=STEPS, label="building report", file=sys.stderr) as bar:
        html = run_with_session(lambda session: build_report(session, filters, progress=lambda label: bar.update(1)))
    out.write_text(html, encoding="utf-8")
    click.echo(f"wrote {out} ({len(html) // 1024} KiB)")


@analytics.group()
def export() -> None:
    """Export rows for offline work."""


@export.command("decisions")
@filter_options
@click.option("--out", default="-", show_default=True, help="CSV file to write ('-' = standard output).")
def export_decisions_command(out: str, **raw: Any) -> None:
    """One row per candidate per turn: the input format of `companion tune`."""
    from analytics.export import export_decisions

    filters = make_filters(**raw)
    target = nullcontext(sys.stdout) if out == "-" else open(out, "w", newline="", encoding="utf-8")  # noqa: SIM115
    with target as handle:
        count = run_with_session(lambda session: export_decisions(session, filters, handle))
    click.echo(f"exported {count} decision rows" + ("" if out == "-" else f" to {out}"), err=True)


@analytics.command()
@click.option("--turns", type=click.IntRange(min=1), default=10_000, show_default=True)
@click.option("--agents", type=click.IntRange(min=2, max=64), default=4, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--days", type=click.IntRange(min=1), default=365, show_default=True, help="History length up to now.")
def synth(turns: int, agents: int, seed: int, days: int) -> None:
    """Write synthetic history (marked synthetic) for demos and benchmarks."""
    from analytics.synth import synthesize

    with click.progressbar(length=turns, label="writing synthetic turns", file=sys.stderr) as bar:
        summary = run_with_session(
            lambda session: synthesize(session.bind, turns=turns, agents=agents, seed=seed, days=days,
                                       progress=bar.update),
            migrate_embedded=True,
        )
    click.echo(f"synthetic history: {summary.turns} turns, {summary.agents} agents, {summary.conversations} "
               f"conversations; rows {summary.rows}")


__all__ = ["analytics", "tune"]
