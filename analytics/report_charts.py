"""The report's charts: each takes every query's rows and returns a figure (or None: no data)."""

from __future__ import annotations

from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def speaking_share(results: dict) -> plt.Figure | None:
    rows = results["speaking-share"]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(8, 3.2))
    ax.bar([r.agent_name or r.agent_id for r in rows], [r.share or 0 for r in rows], color="#4c78a8")
    ax.set_ylabel("share of selections")
    ax.tick_params(axis="x", labelrotation=20)
    return fig


def fallback_rate(results: dict) -> plt.Figure | None:
    per_day: dict[str, dict[str, float]] = defaultdict(dict)
    for r in results["selected-by"]:
        per_day[r.day][r.selected_by] = r.share or 0.0
    if not per_day:
        return None
    days = sorted(per_day)
    fig, ax = plt.subplots(figsize=(10, 3.2))
    for how, color in (("fallback", "#e45756"), ("llm", "#4c78a8"), ("mention", "#72b7b2")):
        ax.plot(range(len(days)), [per_day[d].get(how, 0.0) for d in days], label=how, color=color, lw=1)
    _day_ticks(ax, days)
    ax.set_ylabel("share of selections")
    ax.legend(loc="upper right")
    return fig


def emotion_mix(results: dict) -> plt.Figure | None:
    rows = results["emotions"]
    if not rows:
        return None
    days = sorted({r.day for r in rows})
    emotions = sorted({r.primary_emotion for r in rows})
    index = {d: i for i, d in enumerate(days)}
    mix = np.zeros((len(emotions), len(days)))
    for r in rows:
        mix[emotions.index(r.primary_emotion), index[r.day]] = r.share or 0.0
    fig, ax = plt.subplots(figsize=(10, 3.6))
    ax.stackplot(range(len(days)), mix, labels=emotions, colors=plt.cm.tab20.colors[: len(emotions)])
    _day_ticks(ax, days)
    ax.set_ylabel("share of turns")
    ax.legend(loc="center left", bbox_to_anchor=(1, 0.5), fontsize=8)
    return fig


def routing_heatmap(results: dict) -> plt.Figure | None:
    cells = [r for r in results["emotion-routing"] if r.dimension == "need_capability"]
    if not any(r.candidates for r in cells):
        return None
    needs = list(dict.fromkeys(r.need for r in cells))
    caps = list(dict.fromkeys(r.capability for r in cells))
    grid = np.full((len(needs), len(caps)), np.nan)
    for r in cells:
        if r.rate is not None:
            grid[needs.index(r.need), caps.index(r.capability)] = r.rate
    fig, ax = plt.subplots(figsize=(6, 3.6))
    im = ax.imshow(grid, cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(len(caps)), caps)
    ax.set_yticks(range(len(needs)), [f"needs {n}" for n in needs])
    for (i, j), v in np.ndenumerate(grid):
        if not np.isnan(v):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", color="white" if v < 0.6 else "black", fontsize=8)
    fig.colorbar(im, ax=ax, label="selection rate")
    ax.set_xlabel("agent capability (tag ≥ 0.5)")
    return fig


def latency(results: dict) -> plt.Figure | None:
    rows = results["latency"]
    if not rows:
        return None
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(8, 3.2))
    ax.bar(x - 0.2, [r.p50_ms or 0 for r in rows], 0.4, label="p50", color="#4c78a8")
    ax.bar(x + 0.2, [r.p95_ms or 0 for r in rows], 0.4, label="p95", color="#f58518")
    ax.set_xticks(x, [r.stage for r in rows], rotation=20)
    ax.set_ylabel("ms")
    ax.legend()
    return fig


def selection_paths(results: dict) -> plt.Figure | None:
    rows = results["selection-paths"]
    if not rows:
        return None
    labels = [f"{r.mode}/{r.path}" for r in rows]
    fig, ax = plt.subplots(figsize=(8, 3.2))
    bars = ax.bar(labels, [r.turns for r in rows], color="#4c78a8")
    for bar, r in zip(bars, rows, strict=True):  # the model's agreement with the scorer, where it answered
        if r.agreement_rate is not None:
            ax.annotate(f"agreed {r.agreement_rate:.0%}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("turns")
    ax.tick_params(axis="x", labelrotation=20)
    return fig


def message_controls(results: dict) -> plt.Figure | None:
    rows = [r for r in results["message-controls"] if r.scope == "agent" and r.replies]
    series = (("regenerate_rate", "regenerate", "#4c78a8"), ("swipe_back_rate", "swipe back", "#f58518"),
              ("rewind_rate", "rewind", "#e45756"), ("stop_rate", "stop", "#72b7b2"))
    if not any(getattr(r, field) for r in rows for field, _, _ in series):
        return None
    x = np.arange(len(rows))
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(8, 3.2))
    for i, (field, label, color) in enumerate(series):
        ax.bar(x + (i - (len(series) - 1) / 2) * width, [getattr(r, field) or 0 for r in rows], width, label=label,
               color=color)
    ax.set_xticks(x, [r.agent_name or r.agent_id for r in rows], rotation=20)
    ax.set_ylabel("per saved reply")
    ax.legend()
    return fig


def _day_ticks(ax: plt.Axes, days: list[str]) -> None:
    step = max(1, len(days) // 10)
    ax.set_xticks(range(0, len(days), step), days[::step], rotation=30, fontsize=8)
    ax.set_ylim(0, 1)


CHARTS = (
    ("Speaking share per agent", speaking_share),
    ("Fallback rate per day", fallback_rate),
    ("Emotion mix per day", emotion_mix),
    ("Routing: selection rate by user need × agent capability", routing_heatmap),
    ("Latency per stage (p50 / p95)", latency),
    ("Selection paths: turns per mode/path (and the model's agreement with the scorer)", selection_paths),
    ("Message controls per agent: regenerations, swipes back, rewinds and stops per saved reply", message_controls),
)
