"""The figures of notebook 04 (RAGAS evaluation): metric means with intervals on the same items."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from toolroute.evaluation.metrics import wilson_interval  # noqa: E402
from toolroute_lab.shared.figures import save  # noqa: E402


def same_items(pool: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The rows of a per-arm table (`by_arm.csv`, one pool of items) whose arm ran every item of the pool
    (the most runs, per model when there is a `model` column), and a note naming those left out with their
    runs: 04's ceiling replays only the items with gold calls, on the test queries the no-call ones, where
    it is complete by construction; drawn beside the other arms it would read as a ceiling over all of
    them. Used by 04's notebook and `redraw`."""
    if pool.empty:
        return pool, ""
    most = pool.groupby("model")["runs"].transform("max") if "model" in pool.columns else pool["runs"].max()
    full = pool["runs"] == most
    several = "model" in pool.columns and pool["model"].nunique() > 1
    left = [f"{r.arm}{f' · {r.model}' if several else ''} ({int(r.runs)} of {int(m)})"
            for r, m in zip(pool[~full].itertuples(), pd.Series(most, index=pool.index)[~full])]
    return pool[full], ("; left out, run on fewer items: " + ", ".join(left)) if left else ""


ID_COLUMNS = ("kind", "id", "conversation", "model", "arm", "turn")


def _mean_ci(values: np.ndarray, n_boot: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% CI of a mean: Wilson for 0/1 values, a percentile bootstrap otherwise (seeded: same figure twice)."""
    if len(values) == 0:
        return math.nan, math.nan
    if np.isin(values, (0.0, 1.0)).all():
        lo, hi = wilson_interval(values.sum(), len(values))
        return float(lo), float(hi)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(n_boot, len(values)))].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def metric_plot(scores: pd.DataFrame, path: str | Path | None = None, metrics: Sequence[str] | None = None,
                bins: int = 10):
    """One panel per metric: per kind (and model when several), the distribution of the items as a histogram
    on its side (bar length = share of the kind's items in that 0.1-wide bin, so no item hides behind
    another) and the mean with its 95% CI; n in each label."""
    metrics = [m for m in (metrics or [c for c in scores.columns if c not in ID_COLUMNS])
               if m in scores.columns and pd.to_numeric(scores[m], errors="coerce").notna().any()]
    kinds = list(dict.fromkeys(scores["kind"]))
    if "arm" in scores.columns and scores["arm"].nunique() > 1:  # runs of several arms: one row per arm and kind
        arms = list(dict.fromkeys(scores["arm"].astype(str)))
        scores = scores.assign(kind=scores["arm"].astype(str) + " · " + scores["kind"])
        kinds = [f"{a} · {k}" for a in arms for k in kinds if f"{a} · {k}" in set(scores["kind"])]
    if "model" in scores.columns and scores["model"].nunique() > 1:
        models = list(dict.fromkeys(scores["model"].astype(str)))
        scores = scores.assign(kind=scores["model"].astype(str) + "\n" + scores["kind"])
        kinds = [f"{m}\n{k}" for m in models for k in kinds if f"{m}\n{k}" in set(scores["kind"])]
    ncols = min(4, max(1, len(metrics)))
    nrows = max(1, math.ceil(len(metrics) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.6 * nrows), squeeze=False)
    edges = np.linspace(0, 1, bins + 1)
    for ax, metric in zip(axes.flat, metrics):
        labels = []
        for i, kind in enumerate(kinds):
            values = pd.to_numeric(scores.loc[scores["kind"] == kind, metric], errors="coerce").dropna().to_numpy()
            labels.append(f"{kind}\nn={len(values)}")
            if not len(values):
                continue
            counts, _ = np.histogram(np.clip(values, 0, 1), bins=edges)
            ax.barh(edges[:-1], counts / len(values) * 0.8, height=edges[1] - edges[0], left=i - 0.4,
                    align="edge", color=f"C{i}", alpha=0.45, edgecolor="white")
            for edge, count in zip(edges[:-1], counts):
                if count:
                    ax.text(i - 0.38, edge + (edges[1] - edges[0]) / 2, str(count), va="center", fontsize=6)
            lo, hi = _mean_ci(values)
            mean = float(values.mean())
            ax.errorbar(i + 0.3, mean, yerr=[[mean - lo], [hi - mean]], fmt="D", color="black", ms=4, capsize=3)
        ax.set_xticks(range(len(kinds)), labels, fontsize=7.5)
        ax.set_xlim(-0.5, len(kinds) - 0.4)
        ax.set_ylim(0, 1)
        ax.set_ylabel("score")
        ax.set_title(metric, fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    for ax in list(axes.flat)[len(metrics):]:
        ax.axis("off")
    fig.suptitle("RAGAS metrics per item kind — bars: share of items per 0.1 score bin; ◆ mean with 95% CI "
                 "(Wilson for 0/1 scores, bootstrap otherwise)", fontsize=10)
    fig.tight_layout()
    return save(fig, path)
