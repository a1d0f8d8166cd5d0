"""Analytics benchmark: synth → every query → export → tuning fit, on SQLite and/or PostgreSQL.

    python tests/perf/bench_analytics.py --turns 250000 [--postgres postgresql+asyncpg://postgres@127.0.0.1:5432/postgres]

Iterating on queries without re-synthesising (~140 s) each time:

    python tests/perf/bench_analytics.py --sqlite-path /tmp/bench.db --postgres-db postgresql+asyncpg://…/bench \
        --only usage,latency --repeat 3 --queries-only

``--sqlite-path`` / ``--postgres-db`` keep (or reuse) a database: it is migrated, synthesised only
when it holds no decision rows, and never dropped. ``--repeat`` reports the median of N runs.

Prints one JSON object: seconds per step and the process's peak RSS so far (MiB, monotonic).
Target (issue 6): every query < 2 s on PostgreSQL at 250,000 turns / ~1,000,000 decision rows;
the fit < 60 s. Not part of the default test run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.engine import make_url

from analytics.export import export_decisions
from analytics.filters import parse_filters
from analytics.queries import QUERIES
from analytics.synth import synthesize
from analytics.tuning.fit import fit
from app.db.engine import create_engine, session_factory
from app.db.migrate import upgrade
from app.db.models import SpeakerDecision
from scheduling.selection.weights import DEFAULT_WEIGHTS


class Meter:
    def __init__(self) -> None:
        self.figures: dict[str, Any] = {}

    async def measure(self, name: str, work: Any) -> Any:
        start = time.perf_counter()
        result = await work if asyncio.iscoroutine(work) else work()
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        self.figures[name] = {"seconds": round(seconds, 3), "peakRssMiB": round(peak, 1)}
        return result

    async def measure_median(self, name: str, make_work: Any, repeat: int) -> Any:
        runs, result = [], None
        for _ in range(max(1, repeat)):
            result = await self.measure(name, make_work())
            runs.append(self.figures[name]["seconds"])
        self.figures[name]["seconds"] = round(statistics.median(runs), 3)
        if repeat > 1:
            self.figures[name]["runs"] = runs
        return result


async def _admin(url: str, sql: str) -> None:
    engine = create_engine(url)
    async with engine.connect() as conn:
        await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text(sql))
    await engine.dispose()


async def bench(
    url: str, turns: int, workdir: Path, fit_folds: int, *,
    only: list[str] | None = None, repeat: int = 1, queries_only: bool = False,
) -> dict[str, Any]:
    meter = Meter()
    await upgrade(url)
    engine = create_engine(url)
    try:
        sessions = session_factory(engine)
        async with sessions() as session:
            existing = (await session.execute(select(func.count()).select_from(SpeakerDecision))).scalar_one()
        if not existing:
            await meter.measure("synth", synthesize(engine, turns=turns, seed=1))
        async with engine.connect() as conn:
            if engine.dialect.name == "postgresql":
                await conn.execution_options(isolation_level="AUTOCOMMIT")
                await conn.execute(text("VACUUM ANALYZE"))
            else:
                await conn.execute(text("ANALYZE"))
                await conn.commit()
        async with sessions() as session:
            rows = (await session.execute(select(func.count()).select_from(SpeakerDecision))).scalar_one()
            for label, filters in (("all", parse_filters()), ("30d", parse_filters(since="30d"))):
                for name, query in QUERIES.items():
                    if only and name not in only:
                        continue
                    await meter.measure_median(
                        f"query {name} ({label})", lambda q=query, f=filters: q.run(session, f), repeat)
        if queries_only:
            slowest = max((v["seconds"] for k, v in meter.figures.items() if k.startswith("query")), default=0.0)
            return {"turns": turns, "decisionRows": rows, "slowestQuerySeconds": slowest, "steps": meter.figures}
        out = workdir / "decisions.csv"
        async with sessions() as session:
            with out.open("w", newline="") as fh:
                await meter.measure("export decisions", export_decisions(session, parse_filters(), fh))
        for label in ("selected", "llm"):
            await meter.measure(f"tune fit --label {label}", lambda label=label: fit(
                out, label=label, current=DEFAULT_WEIGHTS, folds=fit_folds, seed=0))
    finally:
        await engine.dispose()
    slowest = max(v["seconds"] for k, v in meter.figures.items() if k.startswith("query"))
    return {"turns": turns, "decisionRows": rows, "slowestQuerySeconds": slowest, "steps": meter.figures}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=250_000)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--postgres", help="server URL; a throw-away database is created on it")
    parser.add_argument("--skip-sqlite", action="store_true")
    parser.add_argument("--sqlite-path", help="keep/reuse this SQLite file (synthesised only when empty)")
    parser.add_argument("--postgres-db", help="keep/reuse this PostgreSQL database URL (synthesised only when empty)")
    parser.add_argument("--only", help="comma-separated query names to run (default: all)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per query; the median is reported")
    parser.add_argument("--queries-only", action="store_true", help="skip the export and the tuning fit")
    args = parser.parse_args()
    only = [n.strip() for n in args.only.split(",") if n.strip()] if args.only else None
    if only and (unknown := sorted(set(only) - set(QUERIES))):
        parser.error(f"unknown queries: {', '.join(unknown)}")
    opts = {"only": only, "repeat": args.repeat, "queries_only": args.queries_only}
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_sqlite:
            path = args.sqlite_path or f"{tmp}/bench.db"
            results["sqlite"] = await bench(f"sqlite+aiosqlite:///{path}", args.turns, Path(tmp), args.folds, **opts)
        if args.postgres_db:
            results["postgres"] = await bench(args.postgres_db, args.turns, Path(tmp), args.folds, **opts)
        elif args.postgres:
            name = f"bench_analytics_{uuid.uuid4().hex[:8]}"
            await _admin(args.postgres, f'CREATE DATABASE "{name}"')
            url = make_url(args.postgres).set(database=name).render_as_string(hide_password=False)
            try:
                results["postgres"] = await bench(url, args.turns, Path(tmp), args.folds, **opts)
            finally:
                await _admin(args.postgres, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
