"""What every notebook's figures share, and the figures of more than one notebook (the agent arms' cost).

Conventions: rates carry 95% intervals (bootstrap where the table has them, Wilson from counts
otherwise); bars start at 0; a legend sits outside the axes (it covers no data); a default or
pooled series is black and thick. Every figure function takes data frames (so a figure can be redrawn
from the committed tables, see `toolroute_lab.run.redraw`), saves to `path` when given, and returns
the figure (a notebook shows it inline as the cell's last expression)."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from toolroute.evaluation.metrics import wilson_interval  # noqa: E402
from toolroute_lab.shared.arms import CEILING, ROUTED  # noqa: E402


LINESTYLES = ("-", "--", ":", "-.")


DEFAULT_COLOR = "black"


CALL_COLOR = "#4C72B0"


def save(fig, path: str | Path | None):
    if path is not None:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)  # still drawable inline; pyplot no longer holds it (no pile-up across a notebook)
    return fig


def legend_outside(ax, **kwargs):
    """A legend right of the axes, where it can cover no data."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kwargs)


def wilson_err(k, n, p=None) -> np.ndarray:
    """The (2, n) error-bar lengths of the Wilson interval around `p` (default k / n)."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    p = k / n if p is None else np.asarray(p, dtype=float)
    lo, hi = wilson_interval(k, n)
    return np.vstack([np.clip(p - lo, 0, None), np.clip(hi - p, 0, None)])


def line_styles(n: int) -> list[tuple[str, str]]:
    """`n` distinct (colour, line style) pairs: the ten tab10 colours, then the same colours dashed, dotted ..."""
    colors = [f"C{i}" for i in range(10)]
    if n > len(colors) * len(LINESTYLES):
        raise ValueError(f"{n} lines: at most {len(colors) * len(LINESTYLES)} distinct styles")
    return [(colors[i % len(colors)], LINESTYLES[i // len(colors)]) for i in range(n)]


def arm_cost_plot(table: pd.DataFrame, path: str | Path | None = None, title: str = "",
                  rate: str = "completion", count: str = "completed", cost: str = "total_tokens"):
    """Token cost against accuracy per arm (`arms.arm_table` rows: `arm`, `runs`, the `count` of successes,
    the mean `cost` per run; `model` when several): one point per routed top-k, oracle and all-tools arm
    with its Wilson 95% interval (and the cost's bootstrap interval when the table has `<cost>_lo/_hi`);
    the answer-writing ceiling (gold calls replayed) as a dashed line; an arm none of whose runs fitted
    the context (`over_context` = `runs`) is named under the axes instead of drawn. x on a log scale (linear
    when a cost is 0, as with the model-free replay)."""
    models = list(dict.fromkeys(table["model"].astype(str))) if "model" in table.columns else [""]
    fig, ax = plt.subplots(figsize=(8.5, 4.8))
    notes = []
    for m, model in enumerate(models):
        part = table[table["model"].astype(str) == model] if model else table
        suffix = f" · {model}" if len(models) > 1 else ""
        ceiling = part[part["arm"] == CEILING]
        for _, row in ceiling.iterrows():
            p = row[count] / row["runs"] if row["runs"] else math.nan
            lo, hi = wilson_interval(row[count], row["runs"])
            ax.axhline(p, color=f"C{m}", ls="--", lw=1.2,
                       label=f"answer-writing ceiling: gold calls replayed (n={int(row['runs'])}){suffix}")
            ax.axhspan(lo, hi, color=f"C{m}", alpha=0.08)
        points = part[part["arm"] != CEILING]
        for i, (_, row) in enumerate(points.iterrows()):
            over = int(row.get("over_context", 0) or 0)
            if pd.isna(row[cost]) or (over and over >= row["runs"]):
                notes.append(f"{row['arm']}{suffix}: {over}/{int(row['runs'])} runs over the context, not sent")
                continue
            p = row[count] / row["runs"]
            xerr = None
            if f"{cost}_lo" in row and pd.notna(row[f"{cost}_lo"]):
                xerr = [[max(row[cost] - row[f"{cost}_lo"], 0)], [max(row[f"{cost}_hi"] - row[cost], 0)]]
            marker = "o" if str(row["arm"]).startswith(ROUTED) else ("*" if row["arm"] == "oracle" else "s")
            ax.errorbar([row[cost]], [p], yerr=wilson_err([row[count]], [row["runs"]]), xerr=xerr, marker=marker,
                        ms=9 if marker == "*" else 6, capsize=3, ls="none", color=f"C{m}")
            ax.annotate(f"{row['arm']}" + (f" ({over} over ctx)" if over else ""), (row[cost], p),
                        textcoords="offset points", xytext=(6, 4), fontsize=8)
        routed = points[points["arm"].astype(str).str.startswith(ROUTED) & points[cost].notna()]
        if len(routed) > 1:
            routed = routed.sort_values(cost)
            ax.plot(routed[cost], routed[count] / routed["runs"], color=f"C{m}", lw=1, alpha=0.6,
                    label=f"routed top-k{suffix}")
    costs = pd.to_numeric(table.loc[table["arm"] != CEILING, cost], errors="coerce").dropna()
    log = bool(len(costs)) and bool((costs > 0).all())  # a model-free replay reports 0 tokens: linear then
    if log:
        ax.set_xscale("log")
    ax.set_ylim(0, 1.03)
    ax.set_xlabel(f"mean {cost.replace('_', ' ')} per run" + (" (log scale)" if log else ""))
    ax.set_ylabel(f"{rate} (Wilson 95% CI)")
    runs = int(table["runs"].max()) if len(table) else 0
    ax.set_title(title or f"Token cost vs {rate} per arm — oracle, routed top-k, all tools ({runs} runs per arm)",
                 fontsize=10)
    ax.grid(alpha=0.3, which="both")
    if ax.get_legend_handles_labels()[0]:
        legend_outside(ax, fontsize=8)
    if notes:
        fig.text(0.01, -0.02, "; ".join(notes), fontsize=8, va="top")
    return save(fig, path)
