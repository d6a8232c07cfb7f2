"""The figures of notebook 01 (ingest): chunk lengths and retrieval hit rates."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from toolroute_lab.shared.figures import CALL_COLOR, DEFAULT_COLOR, save, wilson_err  # noqa: E402


def chunk_length_bins(size: int, longest: int | None = None, bins: int = 20) -> np.ndarray:
    """Bin edges 0 … `size` (the last edge is the limit itself, inclusive), extended in the same width only
    when a chunk is longer than the limit: no bar right of the limit unless a chunk is."""
    width = size / bins
    edges = np.linspace(0, size, bins + 1)
    if longest is not None and longest > size:
        extra = math.ceil((longest - size) / width)
        edges = np.concatenate([edges, size + width * np.arange(1, extra + 1)])
    return edges


def chunk_length_plot(lengths: pd.DataFrame, size: int, overlap: int, path: str | Path | None = None):
    """Histogram of chunk lengths per collection, with the size limit marked."""
    keys = list(dict.fromkeys(lengths["collection"]))
    fig, axes = plt.subplots(1, max(1, len(keys)), figsize=(5.5 * max(1, len(keys)), 4), squeeze=False)
    for ax, key in zip(axes[0], keys):
        values = lengths.loc[lengths.collection == key, "chars"]
        longest = int(values.max()) if len(values) else 0
        ax.hist(values, bins=chunk_length_bins(size, longest), color=CALL_COLOR, alpha=0.85, edgecolor="white")
        ax.axvline(size, color="#C44E52", ls="--", lw=1, label=f"size limit {size}")
        ax.set_title(f"{key}: {len(values)} chunks, median {int(values.median()) if len(values) else 0}, "
                     f"max {longest} chars", fontsize=10)
        ax.set_xlabel(f"characters per chunk (header excluded; bins of {size // 20})")
        ax.set_ylabel("chunks")
        ax.legend(fontsize=8, loc="upper left")
    fig.suptitle(f"Chunk lengths — size {size}, overlap {overlap}")
    fig.tight_layout()
    return save(fig, path)


def hit_rate_plot(table: pd.DataFrame, ks: Sequence[int], path: str | Path | None = None, embedder: str = ""):
    """hit@k against chunk size with Wilson 95% CIs, one panel per collection (all, terms, product_info), and
    MRR on its own panel and axis."""
    keys = [c for c in ("all", *[c for c in dict.fromkeys(table["collection"]) if c != "all"])
            if c in set(table["collection"])]
    fig, axes = plt.subplots(1, len(keys) + 1, figsize=(4.4 * (len(keys) + 1), 4.2), squeeze=False)
    axes = axes[0]
    sizes = sorted(table["chunk_size"].unique())
    step = (max(sizes) - min(sizes)) / 60 if len(sizes) > 1 else 1
    for ax, key in zip(axes, keys):
        t = table[table.collection == key].sort_values("chunk_size")
        n = int(t["n"].iloc[0])
        for i, k in enumerate(ks):
            p = t[f"hit@{k}"].to_numpy()
            err = wilson_err(np.round(p * t["n"]), t["n"], p)
            ax.errorbar(t["chunk_size"] + (i - (len(ks) - 1) / 2) * step, p, yerr=err, marker="o", capsize=2,
                        label=f"hit@{k}", color=f"C{i}")
        ax.set_xticks(sizes)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("chunk size (characters)")
        ax.set_ylabel(f"share of the {n} questions with a hit in the top k")
        ax.set_title(f"{key} ({n} questions)", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8, loc="lower left")
    ax = axes[-1]
    for i, key in enumerate(keys):
        t = table[table.collection == key].sort_values("chunk_size")
        ax.plot(t["chunk_size"], t["mrr"], marker="s", color=DEFAULT_COLOR if key == "all" else f"C{i + 4}",
                lw=2.2 if key == "all" else 1.2, label=f"{key} (n={int(t['n'].iloc[0])})")
    ax.set_xticks(sizes)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("chunk size (characters)")
    ax.set_ylabel(f"MRR (mean 1/rank of the first hit, top {max(ks)})")
    ax.set_title("MRR per collection", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    fig.suptitle(f"Retrieval on rag_qa{' — ' + embedder if embedder else ''} (bars: Wilson 95% CI)")
    fig.tight_layout()
    return save(fig, path)
