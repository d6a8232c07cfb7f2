"""Figures of the ablation report; each carries the split and settings it came from in its title."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from toolroute.experiments.ablation import ArmResult, confusion_counts  # noqa: E402


def _save(fig, path: str | Path | None):
    if path is not None:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    return fig


def recall_curves(table: pd.DataFrame, ks: Sequence[int], split: str, path=None):
    """Recall@k against k, one line per arm, with the 95% CI as a band."""
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for _, row in table.iterrows():
        values = [row[f"recall@{k}"] for k in ks]
        lo = [row[f"recall@{k}_lo"] for k in ks]
        hi = [row[f"recall@{k}_hi"] for k in ks]
        line, = ax.plot(ks, values, marker="o", label=row["arm_label"], lw=1.4)
        ax.fill_between(ks, lo, hi, color=line.get_color(), alpha=0.08)
    ax.set_xticks(list(ks))
    ax.set_xlabel("k (tools passed to the LLM)")
    ax.set_ylabel("Recall@k (all expected tools in top k)")
    ax.set_title(f"Recall@k per arm — {split} split")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right", ncol=2)
    return _save(fig, path)


def metric_bars(table: pd.DataFrame, metric: str, split: str, path=None):
    """One metric per arm with its 95% CI, sorted."""
    t = table.sort_values(metric)
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(t) + 1.5))
    err = np.vstack([t[metric] - t[f"{metric}_lo"], t[f"{metric}_hi"] - t[metric]])
    ax.barh(t["arm_label"], t[metric], xerr=err, color="#4C72B0", alpha=0.85, capsize=2)
    ax.set_xlim(max(0.0, float(t[f"{metric}_lo"].min()) - 0.05), 1.0)
    ax.set_xlabel(f"{metric} (95% bootstrap CI)")
    ax.set_title(f"{metric} per arm — {split} split")
    ax.grid(axis="x", alpha=0.3)
    return _save(fig, path)


def confusion_heatmap(result: ArmResult, split: str, path=None, top: int = 15):
    """Expected vs predicted top-1 among the tools involved in the most frequent mistakes."""
    counts = confusion_counts(result, top=top)
    fig, ax = plt.subplots(figsize=(8, 6.5))
    if counts.empty:
        ax.text(0.5, 0.5, "no top-1 confusions", ha="center", va="center")
        ax.set_axis_off()
        return _save(fig, path)
    matrix = counts.pivot_table(index="expected", columns="predicted", values="count", fill_value=0)
    im = ax.imshow(matrix.values, cmap="Reds")
    ax.set_xticks(range(matrix.shape[1]), matrix.columns, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(matrix.shape[0]), matrix.index, fontsize=8)
    for i in range(matrix.shape[0]):
        for j in range(matrix.shape[1]):
            if matrix.values[i, j]:
                ax.text(j, i, int(matrix.values[i, j]), ha="center", va="center", fontsize=8)
    ax.set_xlabel("predicted top-1")
    ax.set_ylabel("expected")
    ax.set_title(f"Top confusions — {result.spec.label}, {split} split")
    fig.colorbar(im, ax=ax, shrink=0.7)
    return _save(fig, path)


def no_call_scores(result: ArmResult, is_call: Sequence[bool], split: str, path=None):
    """Why one cosine threshold fails and what the fitted rule does: two panels, call vs no-call."""
    call = np.asarray(is_call)
    top1 = np.array([r.features.get("dense_top1", np.nan) for r in result.results])
    prob = np.array([r.call_probability if r.call_probability is not None else np.nan for r in result.results])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    bins = np.linspace(np.nanmin(top1) - 0.01, np.nanmax(top1) + 0.01, 30) if np.isfinite(top1).any() else 20
    if np.isfinite(top1).any():
        axes[0].hist(top1[call], bins=bins, alpha=0.6, label="call rows", color="#4C72B0")
        axes[0].hist(top1[~call], bins=bins, alpha=0.6, label="no-call rows", color="#DD8452")
    axes[0].set_title("dense top-1 cosine (one threshold cannot split them)", fontsize=9)
    axes[0].set_xlabel("top-1 cosine")
    axes[0].legend()
    bins = np.linspace(0, 1, 26)
    axes[1].hist(prob[call], bins=bins, alpha=0.6, label="call rows", color="#4C72B0")
    axes[1].hist(prob[~call], bins=bins, alpha=0.6, label="no-call rows", color="#DD8452")
    if result.threshold is not None:
        axes[1].axvline(result.threshold, color="k", ls="--", label=f"threshold {result.threshold:.2f} (fitted on calib)")
    axes[1].set_title("fitted rule P(call) (dense, margin, BM25, lexical coverage)", fontsize=9)
    axes[1].set_xlabel("P(call)")
    axes[1].legend()
    fig.suptitle(f"No-call evidence — {result.spec.label}, {split} split")
    return _save(fig, path)
