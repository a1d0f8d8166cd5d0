"""``companion analytics report``: one self-contained HTML file with tables and charts.

Charts are matplotlib (Agg backend, no display needed) PNGs embedded as base64 ``data:`` URIs,
and the styles are inline, so the file can be mailed around and opened offline.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sqlalchemy.ext.asyncio import AsyncSession  # noqa: E402

from analytics.filters import Filters  # noqa: E402
from analytics.fonts import use_cjk_font  # noqa: E402
from analytics.queries import QUERIES, Row  # noqa: E402
from analytics.report_charts import CHARTS  # noqa: E402

STEPS = len(QUERIES) + len(CHARTS) + 1
MAX_TABLE_ROWS = 60
STYLE = """body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px}
th{background:#f3f3f3}td.n{text-align:right}img{max-width:100%;border:1px solid #eee}.note{color:#666}"""


def _png(fig: plt.Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _table(rows: Sequence[Row], fields: Sequence[str]) -> str:
    if not rows:
        return "<p class=note>No rows in this range.</p>"
    head = "".join(f"<th>{html.escape(f)}</th>" for f in fields)
    body = []
    for r in rows[:MAX_TABLE_ROWS]:
        cells = []
        for f in fields:
            v = getattr(r, f)
            num = isinstance(v, (int, float)) and not isinstance(v, bool)
            text = "" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v))
            cells.append(f"<td{' class=n' if num else ''}>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = f"<p class=note>… {len(rows) - MAX_TABLE_ROWS} more rows (use the CLI or HTTP API for all).</p>" \
        if len(rows) > MAX_TABLE_ROWS else ""
    return f"<table><tr>{head}</tr>{''.join(body)}</table>{more}"


def _describe(f: Filters) -> str:
    parts = [f"since {f.since:%Y-%m-%d %H:%M}" if f.since else "from the beginning",
             f"until {f.until:%Y-%m-%d %H:%M}" if f.until else "until now"]
    for label, values in (("conversations", f.conversation_ids), ("agents", f.agent_ids), ("decided by", f.selected_by)):
        if values:
            parts.append(f"{label}: {', '.join(values)}")
    if f.kind:
        parts.append(f"{f.kind} conversations")
    return html.escape("; ".join(parts))


async def build_report(session: AsyncSession, f: Filters, *, progress: Callable[[str], None] = lambda _: None,
                       now: datetime | None = None) -> str:
    results: dict[str, list] = {}
    for name, query in QUERIES.items():
        results[name] = await query.run(session, f)
        progress(name)
    charts = []
    use_cjk_font()  # Chinese agent names and emotions are drawn, not boxes
    for title, draw in CHARTS:
        fig = draw(results)
        charts.append(f"<h3>{html.escape(title)}</h3>" + (f"<img alt='{html.escape(title)}' src='{_png(fig)}'>"
                                                           if fig is not None else "<p class=note>No data.</p>"))
        progress(title)
    sections = [f"<h2 id='{name}'>{html.escape(name)}</h2><p class=note>{html.escape(q.summary)}</p>"
                + _table(results[name], q.row.__struct_fields__) for name, q in QUERIES.items()]
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    progress("html")
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Companion analytics report</title>"
        f"<style>{STYLE}</style></head><body><h1>Companion analytics report</h1>"
        f"<p class=note>Generated {stamp}; {_describe(f)}.</p><h2>Charts</h2>{''.join(charts)}"
        f"{''.join(sections)}</body></html>"
    )
