"""Every figure of the notebooks, drawn from their tables; each says what it shows, over how many rows,
on which split, and with which interval.

Conventions: rates carry 95% intervals (bootstrap where the table has them, Wilson from counts
otherwise); bars start at 0; a legend sits outside the axes (it covers no data); a default or
pooled series is black and thick. Every function takes data frames (so a figure can be redrawn from
the committed tables, see `toolroute.experiments.redraw`), saves to `path` when given, and returns
the figure (a notebook shows it inline as the cell's last expression).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from toolroute.evaluation.metrics import wilson_interval  # noqa: E402
from toolroute.experiments.arms import CEILING, arm_order  # noqa: E402
from toolroute.experiments.arms import title as arm_title  # noqa: E402
from toolroute.experiments.breakdowns import risk_coverage, roc_curve  # noqa: E402

NO_CALL = "(no call)"
LINESTYLES = ("-", "--", ":", "-.")
DEFAULT_COLOR = "black"
CALL_COLOR, NO_CALL_COLOR = "#4C72B0", "#DD8452"


def _save(fig, path: str | Path | None):
    if path is not None:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)  # still drawable inline; pyplot no longer holds it (no pile-up across a notebook)
    return fig


def _legend_outside(ax, **kwargs):
    """A legend right of the axes, where it can cover no data."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kwargs)


def _wilson_err(k, n, p=None) -> np.ndarray:
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


# --- 01 ingest ---------------------------------------------------------------------------------------------

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
    return _save(fig, path)


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
            err = _wilson_err(np.round(p * t["n"]), t["n"], p)
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
    return _save(fig, path)


# --- 02 ToolCard ablation ----------------------------------------------------------------------------------

def recall_curves(table: pd.DataFrame, ks: Sequence[int], split: str, path=None, default_arm: str | None = None):
    """Recall@k against k, one line per arm, each in its own colour and line style; the default arm black and
    thick with its 95% bootstrap CI as a band; the legend outside the axes."""
    fig, ax = plt.subplots(figsize=(10, 6))
    others = [label for label in table["arm_label"] if label != default_arm]
    styles = dict(zip(others, line_styles(len(others))))
    for _, row in table.iterrows():
        label = row["arm_label"]
        values = [row[f"recall@{k}"] for k in ks]
        if label == default_arm:
            ax.fill_between(ks, [row[f"recall@{k}_lo"] for k in ks], [row[f"recall@{k}_hi"] for k in ks],
                            color=DEFAULT_COLOR, alpha=0.12, lw=0, label="default arm: 95% bootstrap CI")
            ax.plot(ks, values, marker="o", color=DEFAULT_COLOR, lw=3.2, zorder=5, label=f"{label} (default)")
        else:
            color, ls = styles[label]
            ax.plot(ks, values, marker=".", color=color, ls=ls, lw=1.3, label=label)
    ax.set_xticks(list(ks))
    ax.set_xlabel("k (tools passed to the LLM)")
    ax.set_ylabel("Recall@k (all expected tools in top k)")
    ax.set_title(f"Recall@k per arm — {split} split, call rows")
    ax.grid(alpha=0.3)
    _legend_outside(ax, fontsize=7)
    return _save(fig, path)


def metric_bars(table: pd.DataFrame, metric: str, split: str, path=None, default_arm: str | None = None,
                dev: pd.DataFrame | None = None, dev_split: str = "dev"):
    """One metric per arm with its 95% CI, bars from 0, sorted by `split`; the default arm in black, and the
    `dev` value of each arm beside it when given."""
    t = table.sort_values(metric).reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(9, 0.42 * len(t) + 1.6))
    y = np.arange(len(t))
    height = 0.4 if dev is not None else 0.75
    err = np.vstack([t[metric] - t[f"{metric}_lo"], t[f"{metric}_hi"] - t[metric]])
    colors = [DEFAULT_COLOR if a == default_arm else CALL_COLOR for a in t["arm_label"]]
    ax.barh(y + (height / 2 if dev is not None else 0), t[metric], height=height, xerr=err, color=colors,
            alpha=0.9, capsize=2, error_kw={"ecolor": "#777777"}, label=f"{split} (95% bootstrap CI)")
    if dev is not None:
        d = dev.set_index("arm_label").reindex(t["arm_label"])
        derr = np.vstack([d[metric] - d[f"{metric}_lo"], d[f"{metric}_hi"] - d[metric]])
        ax.barh(y - height / 2, d[metric].to_numpy(), height=height, xerr=derr, color="#A9B8D3", hatch="//",
                edgecolor="white", capsize=2, label=f"{dev_split} (where choices are made)")
    ax.set_yticks(y, [f"{a}  ◀ default" if a == default_arm else a for a in t["arm_label"]], fontsize=8)
    for tick in ax.get_yticklabels():
        if default_arm and tick.get_text().startswith(default_arm):
            tick.set_fontweight("bold")
    ax.set_xlim(0, 1.0)
    ax.set_xlabel(f"{metric} (95% bootstrap CI)")
    ax.set_title(f"{metric} per arm — {split} split" + (f", {dev_split} beside it" if dev is not None else ""))
    ax.grid(axis="x", alpha=0.3)
    _legend_outside(ax, fontsize=8)
    return _save(fig, path)


def routing_outcomes(rows, modules: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per query: expected tools, the routed top-1, whether a tool was called (the no-call rule's
    decision), and the modules of both. `rows` are `RoutedRow`s (expected, ranked, no_call_predicted)."""
    modules = modules or {}
    records = []
    for row in rows:
        top1 = row.ranked[0] if row.ranked else ""
        records.append({"id": row.id, "expected": tuple(row.expected), "top1": top1,
                        "called": not row.no_call_predicted})
    return _with_modules(pd.DataFrame.from_records(records, columns=["id", "expected", "top1", "called"]), modules)


def _with_modules(outcomes: pd.DataFrame, modules: Mapping[str, str]) -> pd.DataFrame:
    out = outcomes.copy()
    out["expected_module"] = [
        NO_CALL if not e else (modules.get(e[0], "?") if len(e) == 1 else "(multi-tool)") for e in out["expected"]]
    out["routed_module"] = [modules.get(t, "?") if c and t else NO_CALL for t, c in zip(out["top1"], out["called"])]
    return out


def outcomes_from_failures(failures: pd.DataFrame, queries, modules: Mapping[str, str] | None = None) -> pd.DataFrame:
    """`routing_outcomes` rebuilt from a committed failure table (rows wrong at top-1 or in the no-call
    decision) and the split's queries: a row not in the table routed right. For a correct multi-tool row the
    table does not say which expected tool came first: its top-1 is set to the first expected tool."""
    wrong = failures.set_index("id")
    records = []
    for q in queries:
        expected = tuple(q.expected_tools)
        if q.id in wrong.index:
            f = wrong.loc[q.id]
            top3 = str(f["top3"]).split(",") if isinstance(f["top3"], str) else []
            records.append({"id": q.id, "expected": expected, "top1": top3[0] if top3 else "",
                            "called": not _as_bool(f["no_call_predicted"])})
        else:
            records.append({"id": q.id, "expected": expected, "top1": expected[0] if expected else "",
                            "called": bool(expected)})
    return _with_modules(pd.DataFrame.from_records(records, columns=["id", "expected", "top1", "called"]),
                         modules or {})


def _as_bool(value) -> bool:
    return value if isinstance(value, (bool, np.bool_)) else str(value).strip().lower() == "true"


def single_tool_misses(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Every single-tool row whose top-1 is another tool, counted per (expected, routed top-1) pair, by count
    and then by name (not by tie order)."""
    single = outcomes[outcomes["expected"].map(len) == 1]
    miss = single[(single["top1"] != "") & (single["top1"] != single["expected"].map(lambda e: e[0]))]
    counts = (miss.assign(expected=miss["expected"].map(lambda e: e[0]))
              .groupby(["expected", "top1"]).size().reset_index(name="count")
              .rename(columns={"top1": "predicted"}))
    return counts.sort_values(["count", "expected", "predicted"], ascending=[False, True, True]).reset_index(drop=True)


def error_counts(outcomes: pd.DataFrame) -> dict[str, int]:
    """The errors by kind: single-tool top-1 misses, multi-tool rows with a top-1 outside the expected set,
    no-call rows routed to a tool, call rows refused."""
    n_tools = outcomes["expected"].map(len)
    single, multi, none = outcomes[n_tools == 1], outcomes[n_tools > 1], outcomes[n_tools == 0]
    return {"single_rows": len(single),
            "single_misses": int((single["top1"] != single["expected"].map(lambda e: e[0])).sum()),
            "multi_rows": len(multi),
            "multi_misses": int(sum(t not in e for t, e in zip(multi["top1"], multi["expected"]))),
            "no_call_rows": len(none), "no_call_routed": int(none["called"].sum()),
            "call_rows": int((n_tools > 0).sum()), "call_refused": int((~outcomes.loc[n_tools > 0, "called"]).sum())}


def module_confusion(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Counts of expected module (or no call) × routed decision (top-1's module, or no call), over single-tool
    and no-call rows (a multi-tool row has no single expected module)."""
    part = outcomes[outcomes["expected_module"] != "(multi-tool)"]
    modules = sorted(set(part["expected_module"]) | set(part["routed_module"]) - {NO_CALL})
    order = [m for m in modules if m != NO_CALL] + [NO_CALL]
    matrix = pd.crosstab(part["expected_module"], part["routed_module"])
    return matrix.reindex(index=order, columns=order, fill_value=0)


def confusion_plot(outcomes: pd.DataFrame, arm: str, split: str, path=None):
    """Left: the routing decision by module with counts (expected → routed top-1's module, or no call),
    with each module's recall; right: every single-tool miss, expected → routed top-1, by count then name."""
    errors = error_counts(outcomes)
    matrix = module_confusion(outcomes)
    misses = single_tool_misses(outcomes)
    height = max(6.0, 0.26 * len(misses) + 2.0)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(17, height), gridspec_kw={"width_ratios": [1.15, 1]})
    share = matrix.div(matrix.sum(axis=1).replace(0, 1), axis=0)
    ax.imshow(share.values, cmap="Blues", vmin=0, vmax=1)
    for i in range(matrix.shape[0]):
        for j in range(matrix.shape[1]):
            if matrix.values[i, j]:
                ax.text(j, i, int(matrix.values[i, j]), ha="center", va="center", fontsize=8,
                        color="white" if share.values[i, j] > 0.6 else "black")
    labels = []
    for name, row in matrix.iterrows():
        n = int(row.sum())
        right = int(row.get(name, 0))
        labels.append(f"{name} ({right}/{n} = {right / n:.2f})" if n else name)
    ax.set_xticks(range(matrix.shape[1]), matrix.columns, rotation=50, ha="right", fontsize=8)
    ax.set_yticks(range(matrix.shape[0]), labels, fontsize=8)
    ax.set_xlabel("routed: top-1's module, or no call (the no-call rule refused)")
    ax.set_ylabel("expected module (right / rows = recall)")
    n_matrix = int(matrix.values.sum())
    ax.set_title(f"Decision by module, counts ({n_matrix} single-tool and no-call rows; shade = share of the row;\n"
                 f"a wrong tool of the right module counts on the diagonal; {errors['multi_rows']} multi-tool rows "
                 "not in the matrix)", fontsize=9)
    if len(misses):
        pairs = [f"{e} → {p}" for e, p in zip(misses["expected"], misses["predicted"])]
        y = np.arange(len(misses))[::-1]
        bx.barh(y, misses["count"], color="#C44E52", alpha=0.85)
        bx.set_yticks(y, pairs, fontsize=7.5)
        bx.set_xlim(0, max(2, int(misses["count"].max()) + 1))
        bx.xaxis.get_major_locator().set_params(integer=True)
    else:
        bx.text(0.5, 0.5, "no single-tool misses", ha="center", va="center", transform=bx.transAxes)
    bx.set_xlabel("queries")
    bx.set_title(f"Single-tool misses: expected → routed top-1 (all {int(misses['count'].sum())} of "
                 f"{errors['single_rows']} single-tool rows)", fontsize=9)
    bx.grid(axis="x", alpha=0.3)
    fig.suptitle(f"Routing errors — {arm}, {split} split: {errors['single_misses']} single-tool top-1 misses, "
                 f"{errors['multi_misses']} of {errors['multi_rows']} multi-tool rows with a top-1 outside the "
                 f"expected set, {errors['no_call_routed']} of {errors['no_call_rows']} no-call rows routed, "
                 f"{errors['call_refused']} of {errors['call_rows']} call rows refused", fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


def no_call_frame(result, is_call: Sequence[bool]) -> pd.DataFrame:
    """Per query of an arm: whether it expects a call, the dense top-1 cosine and the fitted rule's P(call)
    (what `no_call_scores` draws; small enough to save next to the tables)."""
    return pd.DataFrame({
        "id": [r.id for r in result.rows], "is_call": list(is_call),
        "dense_top1": [r.features.get("dense_top1", np.nan) for r in result.results],
        "call_probability": [r.call_probability if r.call_probability is not None else np.nan
                             for r in result.results]})


def no_call_scores(scores: pd.DataFrame, threshold: float | None, arm: str, split: str, path=None,
                   fitted_on: str = "calib"):
    """Why one cosine threshold fails and what the fitted rule does: call vs no-call rows in two panels, counts
    on a log axis (so a single misrouted no-call row shows next to 150 call rows), no-call rows drawn over the
    call rows, the threshold's split in the legend, the legend below the panels."""
    call = scores["is_call"].astype(bool).to_numpy()
    top1 = scores["dense_top1"].to_numpy(dtype=float)
    prob = scores["call_probability"].to_numpy(dtype=float)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    panels = [(axes[0], top1, "dense top-1 cosine (one threshold cannot split them)", "top-1 cosine"),
              (axes[1], prob, "fitted rule P(call) (dense, margin, BM25, lexical coverage)", "P(call)")]
    for ax, values, title, xlabel in panels:
        finite = np.isfinite(values)
        if not finite.any():
            ax.text(0.5, 0.5, "not recorded", ha="center", va="center", transform=ax.transAxes)
        else:
            lo, hi = (0.0, 1.0) if xlabel == "P(call)" else (np.nanmin(values) - 0.01, np.nanmax(values) + 0.01)
            bins = np.linspace(lo, hi, 26)
            ax.hist(values[call & finite], bins=bins, color=CALL_COLOR, alpha=0.55,
                    label=f"call rows (n={int((call & finite).sum())})", zorder=2)
            ax.hist(values[~call & finite], bins=bins, histtype="step", lw=2.2, color=NO_CALL_COLOR,
                    label=f"no-call rows (n={int((~call & finite).sum())})", zorder=3)
            ax.set_yscale("log")
            ax.set_ylim(0.7, None)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("queries (log scale)")
    if threshold is not None:
        axes[1].axvline(threshold, color="k", ls="--", label=f"threshold {threshold:.2f} (fitted on {fitted_on})",
                        zorder=4)
        routed = int((~call & (prob >= threshold)).sum())
        refused = int((call & (prob < threshold)).sum())
        axes[1].set_title(f"fitted rule P(call): {routed} no-call rows above the threshold (routed), "
                          f"{refused} call rows below (refused)", fontsize=9)
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), bbox_to_anchor=(0.5, -0.02), fontsize=9)
    fig.suptitle(f"No-call evidence — {arm}, {split} split")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return _save(fig, path)


def no_call_curves(decisions: pd.DataFrame, summary: pd.DataFrame, split: str, path=None,
                   default_arm: str | None = None, fitted_on: str = "calib", budget: float | None = 0.03,
                   zoom: float = 0.10):
    """The no-call decision swept over every threshold of P(call), one curve per arm (the default black and
    thick): the ROC (no-call rows refused against call rows refused), the same ROC for false no-call rates
    up to `zoom` (where the budget and the fitted thresholds are), and the risk–coverage curve (routed rows
    that are no-call rows or have a wrong top-1, against the share of rows routed). Each arm's fitted
    threshold is a point with Wilson 95% intervals; the AUC with its bootstrap CI is in the legend; the
    false no-call budget is marked. `decisions` and `summary` come from `breakdowns.no_call_decisions` and
    `breakdowns.no_call_summary`."""
    arms = list(dict.fromkeys(decisions["arm_label"]))
    others = [a for a in arms if a != default_arm]
    styles = {**dict(zip(others, line_styles(len(others)))), default_arm: (DEFAULT_COLOR, "-")}
    point = summary.set_index("arm_label")
    fig, (ax, zx, bx) = plt.subplots(1, 3, figsize=(17, 5.2), gridspec_kw={"width_ratios": [1, 1, 1.1]})
    for arm in [*others, *([default_arm] if default_arm in arms else [])]:
        d = decisions[decisions["arm_label"] == arm]
        color, ls = styles[arm]
        lw, z, ms = (3.0, 5, 7) if arm == default_arm else (1.3, 3, 5)
        p = point.loc[arm]
        label = (f"{arm}{' (default)' if arm == default_arm else ''}: AUC {p['auc']:.3f} "
                 f"[{p['auc_lo']:.3f}, {p['auc_hi']:.3f}]")
        roc = roc_curve(d)
        xerr = _wilson_err([p["false_no_call_rate_count"]], [p["n_call"]])
        yerr = _wilson_err([p["no_call_accuracy_count"]], [p["n_no_call"]])
        for axis in (ax, zx):
            axis.plot(roc["false_no_call_rate"], roc["no_call_accuracy"], color=color, ls=ls, lw=lw, zorder=z,
                      label=label if axis is ax else None)
            axis.errorbar([p["false_no_call_rate"]], [p["no_call_accuracy"]], xerr=xerr, yerr=yerr, fmt="o",
                          color=color, ms=ms, capsize=3, zorder=z + 1)
        rc = risk_coverage(d).sort_values("coverage")
        bx.plot(rc["coverage"], rc["risk"], color=color, ls=ls, lw=lw, zorder=z)
        routed = int(p["n"] - p["no_call_accuracy_count"] - p["false_no_call_rate_count"])
        bx.errorbar([p["coverage"]], [p["risk"]], yerr=_wilson_err([p["risk_count"]], [routed]), fmt="o",
                    color=color, ms=ms, capsize=3, zorder=z + 1)
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls=":", label="chance")
    n_call, n_no_call = int(point["n_call"].iloc[0]), int(point["n_no_call"].iloc[0])
    for axis, right in ((ax, 1.0), (zx, zoom)):
        if budget is not None:
            axis.axvline(budget, color="#C44E52", lw=1, ls="--",
                         label=f"false no-call budget {budget:g}" if axis is ax else None)
        axis.set_xlim(0, right)
        axis.set_ylim(0, 1.02)
        axis.set_xlabel(f"false no-call rate: call rows refused (of {n_call})")
        axis.set_ylabel(f"no-call accuracy: no-call rows refused (of {n_no_call})")
        axis.grid(alpha=0.3)
    ax.set_title(f"ROC of P(call); dot: the threshold fitted on {fitted_on}\n(Wilson 95% CIs)", fontsize=9)
    zx.set_title(f"The same ROC for false no-call rates up to {zoom:g}\n(the budget and the fitted thresholds)",
                 fontsize=9)
    call_share = n_call / (n_call + n_no_call)
    bx.axvline(call_share, color="grey", lw=0.8, ls=":")
    bx.annotate(f"share of call rows {call_share:.2f}", (call_share, 1.0), xycoords=("data", "axes fraction"),
                xytext=(-4, -12), textcoords="offset points", ha="right", fontsize=7, color="dimgrey")
    bx.set_xlim(0, 1.02)
    bx.set_ylim(0, None)
    bx.set_xlabel("coverage: share of all rows routed to a tool")
    bx.set_ylabel("risk: share of the routed rows routed wrongly")
    bx.set_title("Risk–coverage of P(call): wrong = a no-call row routed or a wrong top-1;\n"
                 "dot: the fitted threshold (risk with Wilson 95% CI)", fontsize=9)
    bx.grid(alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=8)
    fig.suptitle(f"The no-call decision at every threshold — {split} split, {n_call + n_no_call} rows per arm "
                 f"({n_call} call, {n_no_call} no-call), {len(arms)} arms")
    fig.tight_layout()
    return _save(fig, path)


def tool_recall_plot(table: pd.DataFrame, arm: str, split: str, path=None):
    """Recall@1 and Recall@5 per tool over its single-tool rows (`breakdowns.tool_recall`), tools grouped by
    module, with Wilson 95% intervals and each tool's n; tools without a single-tool row are listed, not drawn."""
    ks = sorted(int(c.split("@")[1]) for c in table.columns if c.startswith("recall@") and c[7:].isdigit())
    low, high = ks[0], ks[-1]
    drawn = table[table["n"] > 0].reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(9, 0.24 * len(drawn) + 2.2))
    y = np.arange(len(drawn))[::-1]
    for k, shift, color in ((low, 0.2, CALL_COLOR), (high, -0.2, "#A9B8D3")):
        ax.barh(y + shift, drawn[f"recall@{k}"], height=0.4, color=color,
                xerr=_wilson_err(drawn[f"recall@{k}_count"], drawn["n"]), capsize=1.5,
                error_kw={"ecolor": "#555555", "lw": 0.8}, label=f"Recall@{k}")
    ax.set_yticks(y, [f"{t} (n={int(n)})" for t, n in zip(drawn["tool"], drawn["n"])], fontsize=7)
    for boundary in np.flatnonzero(drawn["module"].to_numpy()[1:] != drawn["module"].to_numpy()[:-1]):
        ax.axhline(y[boundary] - 0.5, color="grey", lw=0.6)
    for module, part in drawn.groupby("module", sort=False):
        ax.annotate(module, (1.0, y[part.index].mean()), xycoords=("axes fraction", "data"), xytext=(4, 0),
                    textcoords="offset points", va="center", fontsize=8, color="dimgrey")
    ax.set_xlim(0, 1.0)
    ax.set_ylim(-0.7, len(drawn) - 0.3)
    ax.set_xlabel("share of the tool's single-tool rows with the tool in the top k (Wilson 95% CI)")
    missing = table.loc[table["n"] == 0, "tool"].tolist()
    ax.set_title(f"Per-tool recall — {arm}, {split} split: {int(drawn['n'].sum())} single-tool rows over "
                 f"{len(drawn)} tools" + (f"\n(no single-tool row: {', '.join(missing)})" if missing else ""),
                 fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=8)
    fig.tight_layout()
    return _save(fig, path)


# --- 03 step limits ----------------------------------------------------------------------------------------

def _series_key(frame: pd.DataFrame) -> pd.Series:
    """The line-style key: the model and top-k (or arm) when several, else one series ("")."""
    several_models = "model" in frame.columns and frame["model"].nunique() > 1
    several_k = frame["top_k"].nunique() > 1
    if "arm" in frame.columns and frame["arm"].nunique() > 1:
        return (frame["model"].astype(str) + " · " if several_models else "") + frame["arm"].astype(str)
    if several_models:
        return frame["model"].astype(str) + " · k" + frame["top_k"].astype(str)
    if several_k:
        return "top-" + frame["top_k"].astype(str)
    return pd.Series("", index=frame.index)


def _completion_counts(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    return (frame.assign(completed=frame["completed"].astype(bool))
            .groupby(by, sort=True)["completed"].agg(runs="size", completed="sum").reset_index()
            .assign(completion=lambda t: t["completed"] / t["runs"]))


def completion_plot(frame: pd.DataFrame, path: str | Path | None = None, title: str = ""):
    """Completion rate against the cap with Wilson 95% CIs: one panel per arm (when the rows have arms),
    in it one line per required chain length (colour) and model or top-k (line style) when several; all
    tasks pooled in black. Panels share the y axis, so an arm's level reads against the others'."""
    has_arms = "arm" in frame.columns and frame["arm"].nunique() > 1
    names = arm_order(frame["arm"].astype(str).unique()) if has_arms else [None]
    fig, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names) + 2.2, 4.8), sharey=True, squeeze=False)
    axes = list(axes[0])
    for ax, name in zip(axes, names):
        part = frame[frame["arm"].astype(str) == name] if name is not None else frame
        _completion_panel(ax, part.drop(columns=["arm"]) if name is not None else part)
        ax.set_xticks(sorted(frame["cap"].unique()))
        ax.set_ylim(0, 1.03)
        ax.set_xlabel("max_tool_steps (cap)")
        ax.grid(alpha=0.3)
        if name is not None:
            ax.set_title(arm_title(name), fontsize=10)
    axes[0].set_ylabel("task completion (gold tools called + facts in answer)")
    handles, labels = axes[0].get_legend_handles_labels()
    axes[-1].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0, fontsize=8)
    fig.suptitle(title or f"Completion vs tool-step cap — {', '.join(sorted(frame['domain'].unique()))} "
                          "(bars: Wilson 95% CI)", fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


def _completion_panel(ax, frame: pd.DataFrame) -> None:
    frame = frame.assign(series=_series_key(frame))
    table = _completion_counts(frame, ["series", "chain_length", "cap"])
    pooled = _completion_counts(frame, ["series", "cap"])
    for i, (series, part) in enumerate(table.groupby("series", sort=True)):
        ls = LINESTYLES[i % len(LINESTYLES)]
        suffix = f", {series}" if series else ""
        for length, group in part.groupby("chain_length", sort=True):
            shift = (int(length) - 1.5) * 0.05  # a small sideways shift so equal points and bars stay visible
            ax.errorbar(group["cap"] + shift, group["completion"], yerr=_wilson_err(group["completed"], group["runs"]),
                        marker="o", ls=ls, capsize=2, color=f"C{int(length)}",
                        label=f"{int(length)}-tool tasks (n={int(group['runs'].iloc[0])}){suffix}")
    for i, (series, group) in enumerate(pooled.groupby("series", sort=True)):
        ax.errorbar(group["cap"], group["completion"], yerr=_wilson_err(group["completed"], group["runs"]),
                    color=DEFAULT_COLOR, lw=2.2, capsize=3, ls=LINESTYLES[i % len(LINESTYLES)],
                    label=f"all tasks (n={int(group['runs'].iloc[0])})" + (f", {series}" if series else ""))


def copied_rows(frame: pd.DataFrame) -> int:
    """Rows copied from a smaller cap the run never reached (`reuse_uncapped`), 0 when not recorded."""
    if "reused_from_cap" not in frame.columns:
        return 0
    return int((pd.to_numeric(frame["reused_from_cap"], errors="coerce").fillna(0) > 0).sum())


def cost_plot(frame: pd.DataFrame, path: str | Path | None = None, title: str = ""):
    """Mean tokens (prompt + completion), LLM calls and seconds per task against the cap, per chain length;
    the title says how many rows are copies from a smaller cap."""
    frame = frame.assign(series=_series_key(frame), seconds=pd.to_numeric(frame["seconds"], errors="coerce"))
    cols = ["total_tokens", "prompt_tokens", "llm_calls", "seconds"]
    table = frame.groupby(["series", "chain_length", "cap"], sort=True)[cols].mean().reset_index()
    pooled = frame.groupby(["series", "cap"], sort=True)[cols].mean().reset_index()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    panels = [("total_tokens", "tokens per task (prompt + completion)"), ("llm_calls", "LLM calls per task"),
              ("seconds", "seconds per task")]
    for ax, (col, label) in zip(axes, panels):
        for i, (series, part) in enumerate(table.groupby("series", sort=True)):
            suffix = f", {series}" if series else ""
            for length, group in part.groupby("chain_length", sort=True):
                ax.plot(group["cap"], group[col], marker="o", ls=LINESTYLES[i % len(LINESTYLES)],
                        color=f"C{int(length)}", label=f"{int(length)}-tool{suffix}")
        for i, (series, group) in enumerate(pooled.groupby("series", sort=True)):
            suffix = f", {series}" if series else ""
            ax.plot(group["cap"], group[col], color=DEFAULT_COLOR, lw=2, ls=LINESTYLES[i % len(LINESTYLES)],
                    label=f"all{suffix}")
            if col == "total_tokens":
                ax.plot(group["cap"], group["prompt_tokens"], color="grey", lw=1, ls=LINESTYLES[i % len(LINESTYLES)],
                        label=f"all, prompt only{suffix}")
        ax.set_xticks(sorted(frame["cap"].unique()))
        ax.set_ylim(0, None)
        ax.set_xlabel("max_tool_steps (cap)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    _legend_outside(axes[-1], fontsize=7)
    copied = copied_rows(frame)
    note = (f"{copied} of {len(frame)} rows are copies from a smaller cap the run never reached "
            "(greedy decoding would repeat them)" if copied else f"{len(frame)} rows, each run at its cap")
    fig.suptitle((title or "What each extra step costs — means per task") + f"\n{note}", fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


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
            marker = "o" if str(row["arm"]).startswith("routed") else ("*" if row["arm"] == "oracle" else "s")
            ax.errorbar([row[cost]], [p], yerr=_wilson_err([row[count]], [row["runs"]]), xerr=xerr, marker=marker,
                        ms=9 if marker == "*" else 6, capsize=3, ls="none", color=f"C{m}")
            ax.annotate(f"{row['arm']}" + (f" ({over} over ctx)" if over else ""), (row[cost], p),
                        textcoords="offset points", xytext=(6, 4), fontsize=8)
        routed = points[points["arm"].astype(str).str.startswith("routed") & points[cost].notna()]
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
        _legend_outside(ax, fontsize=8)
    if notes:
        fig.text(0.01, -0.02, "; ".join(notes), fontsize=8, va="top")
    return _save(fig, path)


# --- 04 RAGAS ----------------------------------------------------------------------------------------------

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
    return _save(fig, path)


# --- 05 scale ----------------------------------------------------------------------------------------------

def _n(table: pd.DataFrame, column: str, given: int | None) -> int | None:
    if column in table.columns and table[column].notna().all():
        return int(table[column].iloc[0])
    return given


SCALE_SERIES = {"korean": ("-", "o", "Korean distractors"), "bfcl": ("--", "s", "BFCL distractors (English)")}
SCALE_ARM_COLORS = {"hybrid": DEFAULT_COLOR, "dense": "C0", "bm25": "C2"}


def _rate_band(ax, part: pd.DataFrame, col: str, n: int | None, color: str):
    """95% band of a rate: the table's bootstrap CI columns when it has them, else Wilson from `n` rows."""
    x = part["size"].to_numpy()
    if f"{col}_lo" in part.columns and part[f"{col}_lo"].notna().all():
        lo, hi = part[f"{col}_lo"].to_numpy(), part[f"{col}_hi"].to_numpy()
    elif n:
        lo, hi = wilson_interval(np.round(part[col].to_numpy() * n), n)
    else:
        return
    ax.fill_between(x, lo, hi, color=color, alpha=0.12, lw=0)


def _latency_text(series: list[tuple[str, pd.DataFrame]]) -> str:
    """One line per series: its passes and, when recorded, the machine's load while it was timed."""
    lines = []
    for name, part in series:
        passes = _n(part, "latency_passes", None)
        queries = _n(part, "latency_queries", None)
        load = part["latency_load_avg"].dropna() if "latency_load_avg" in part.columns else pd.Series(dtype=float)
        lines.append(f"{SCALE_SERIES[name][2].split(' ')[0]}: " +
                     (f"median of {passes} passes" if passes and passes > 1 else "one pass (a few ms is noise)") +
                     (f" over {queries} queries" if queries else "") +
                     (f", load average {load.min():.1f}–{load.max():.1f} on the cores" if len(load) else ""))
    return "\n".join(lines)


def plot_scale(table: pd.DataFrame, path: str | Path | None = None, bfcl: pd.DataFrame | None = None,
               n_call: int | None = None, n_no_call: int | None = None, threshold: float = 0.9,
               korean: pd.DataFrame | None = None, split: str = "test", fields: str | None = None):
    """Routing on the insurance split as the catalogue grows (log x), one line per distractor series
    (BFCL's English functions dashed, Korean tools of other business lines solid) and arm (the default
    hybrid black): Hit@1 with the labelled threshold, Recall@5, the no-call rule, how often a
    distractor takes the top rank, route latency (median of repeated passes, min–max band), and BFCL's
    own questions over BFCL's tools. Bands: the tables' bootstrap 95% CIs, else Wilson. Rows of `split`
    and of the card `fields` (default: each table's first) only."""
    series = [("bfcl", table)] + ([("korean", korean)] if korean is not None and len(korean) else [])
    series = [(name, part[part["split"] == split] if "split" in part.columns else part) for name, part in series]
    series = [(name, part[part["fields"] == (fields or part["fields"].iloc[0])] if "fields" in part.columns else part)
              for name, part in series]
    n_call, n_no_call = _n(series[0][1], "n_call", n_call), _n(series[0][1], "n_no_call", n_no_call)
    fig, axes = plt.subplots(2, 3, figsize=(17, 10.5))
    (ax_hit, ax_r5, ax_nc), (ax_top, ax_lat, ax_bfcl) = axes
    for name, part in series:
        ls, marker, label = SCALE_SERIES[name]
        for arm, rows in part.sort_values("size").groupby("arm", sort=False):
            c = SCALE_ARM_COLORS.get(arm, "C3")
            lw = 2.2 if arm == "hybrid" else 1.3
            what = f"{label}, {arm}" + (" (default)" if arm == "hybrid" else "")
            for ax, col, n in ((ax_hit, "hit@1", n_call), (ax_r5, "recall@5", n_call)):
                _rate_band(ax, rows, col, n, c)
                ax.plot(rows["size"], rows[col], ls=ls, marker=marker, color=c, lw=lw, label=what)
            _rate_band(ax_nc, rows, "no_call_accuracy", n_no_call, c)
            ax_nc.plot(rows["size"], rows["no_call_accuracy"], ls=ls, marker=marker, color=c, lw=lw,
                       label=f"{what}: no-call accuracy")
            _rate_band(ax_nc, rows, "false_no_call_rate", n_call, c)
            ax_nc.plot(rows["size"], rows["false_no_call_rate"], ls=ls, marker="x", color=c, lw=0.9, alpha=0.8,
                       label=f"{what}: false no-call")
            if "top1_distractor" in rows.columns:
                _rate_band(ax_top, rows, "top1_distractor", n_call, c)
                ax_top.plot(rows["size"], rows["top1_distractor"], ls=ls, marker=marker, color=c, lw=lw,
                            label=f"{what}: on top")
            if "distractor_in_top5" in rows.columns:
                ax_top.plot(rows["size"], rows["distractor_in_top5"], ls=ls, marker="v", color=c, lw=0.9, alpha=0.7,
                            label=f"{what}: in the top 5")
            if {"latency_p50_min_ms", "latency_p50_max_ms"} <= set(rows.columns):
                ax_lat.fill_between(rows["size"], rows["latency_p50_min_ms"], rows["latency_p50_max_ms"], color=c,
                                    alpha=0.12, lw=0)
            ax_lat.plot(rows["size"], rows["latency_p50_ms"], ls=ls, marker=marker, color=c, lw=lw, label=f"{what}: p50")
            ax_lat.plot(rows["size"], rows["latency_p95_ms"], ls=ls, marker="^", color=c, lw=0.9, alpha=0.7,
                        label=f"{what}: p95")
    ax_hit.axhline(threshold, color="grey", lw=0.9, ls=":", label=f"Hit@1 = {threshold} (the findings' threshold)")
    ax_hit.annotate(f"Hit@1 = {threshold}", (0.0, threshold), xycoords=("axes fraction", "data"), xytext=(3, 3),
                    textcoords="offset points", fontsize=7, color="dimgrey")
    call_n = f"n={n_call} call rows" if n_call else "call rows"
    no_call_n = f"n={n_no_call} no-call rows" if n_no_call else "no-call rows"
    titles = {ax_hit: f"Hit@1, insurance {split} split ({call_n}; bands: 95% CI)",
              ax_r5: f"Recall@5, insurance {split} split ({call_n}; bands: 95% CI)",
              ax_nc: f"No-call rule, refitted on calib at each size\n(accuracy over {no_call_n}, "
                     f"false no-call over {call_n})",
              ax_top: f"Call rows with a distractor on top (thick) or in the top 5 (thin)\n({call_n})",
              ax_lat: "Route latency per query (ms), one query at a time, p50 (band: min–max over passes)\n"
                      + _latency_text(series)}
    for ax, title in titles.items():
        ax.set_xscale("log")
        ax.set_xlabel("tools in the catalogue (54 insurance + distractors)")
        ax.set_title(title, fontsize=9)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    sizes = pd.concat([part["size"] for _, part in series])
    for ax in (ax_hit, ax_r5, ax_nc, ax_top, ax_lat):  # one x range: the series side by side
        ax.set_xlim(sizes.min() * 0.9, sizes.max() * 1.1)
    if not ax_top.lines:  # tables from before the column
        ax_top.text(0.5, 0.5, "not in these tables", transform=ax_top.transAxes, ha="center", va="center", fontsize=9)
    for ax in (ax_hit, ax_r5, ax_nc, ax_top):
        ax.set_ylim(0, 1.02)
    ax_hit.set_ylabel("share of call rows")
    ax_r5.set_ylabel("share of call rows")
    ax_nc.set_ylabel("share of rows")
    ax_top.set_ylabel("share of call rows")
    ax_lat.set_ylabel("ms per query")
    ax_lat.set_ylim(0, None)
    if bfcl is not None and len(bfcl):
        _bfcl_panel(ax_bfcl, bfcl)
    else:
        ax_bfcl.axis("off")
        ax_bfcl.text(0.5, 0.5, "BFCL's own questions: not run", ha="center", va="center", fontsize=9)
    fig.tight_layout()
    return _save(fig, path)


def _bfcl_panel(ax, bfcl: pd.DataFrame):
    cats = list(dict.fromkeys(bfcl["category"]))
    arms = list(dict.fromkeys(bfcl["arm"]))
    width = 0.8 / len(arms)
    for i, arm in enumerate(arms):
        part = bfcl[bfcl["arm"] == arm].set_index("category").reindex(cats)
        x = np.arange(len(cats)) + (i - (len(arms) - 1) / 2) * width
        for metric, alpha, hatch in (("recall@5", 0.35, None), ("hit@1", 0.9, None)):
            p = part[metric].to_numpy()
            err = _wilson_err(np.round(p * part["n"]), part["n"], p)
            ax.bar(x, p, width=width * 0.92, yerr=err, capsize=2, color=SCALE_ARM_COLORS.get(arm, f"C{i}"),
                   alpha=alpha, hatch=hatch,
                   label=f"{arm} {'Hit@1' if metric == 'hit@1' else 'Recall@5 (light)'}")
    n = bfcl.drop_duplicates("category").set_index("category")["n"]
    tools = int(bfcl["tools"].iloc[0]) if "tools" in bfcl.columns else None
    ax.set_xticks(range(len(cats)), [f"{c}\nn={int(n[c])}" for c in cats], fontsize=8)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("share of questions")
    ax.set_title(f"BFCL's questions over BFCL's {tools or ''} tools (English; Wilson 95% CI)", fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)


# --- 06 card improvement -----------------------------------------------------------------------------------

def card_improvement_plot(augmentation: pd.DataFrame, rerank: pd.DataFrame, path: str | Path | None = None,
                          augmentation_cost: Mapping | None = None):
    """Left: each arm's paired Hit@1 difference from its baseline with the 95% paired-bootstrap CI (what a
    0–1 bar chart hides); right: what each arm costs per query (log scale). Hit@1 is over call rows:
    each label gives that n (`n_call`) and the split's rows (`n`)."""
    rows = []
    for table, baseline in ((augmentation, "authored cards"), (rerank, "first stage")):
        for _, r in table.dropna(subset=["hit@1_diff"]).iterrows():
            n_call = int(r["n_call"]) if "n_call" in r and pd.notna(r["n_call"]) else None
            base = r["hit@1"] - r["hit@1_diff"]
            rows.append({"label": f"{r['arm']}\nvs {baseline}, {r['split']} (Hit@1 over "
                                  f"{n_call if n_call else '?'} call rows of {int(r['n'])})\n"
                                  f"{base:.3f} → {r['hit@1']:.3f}",
                         "diff": r["hit@1_diff"], "lo": r["hit@1_diff_lo"], "hi": r["hit@1_diff_hi"]})
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(14, 0.9 * len(rows) + 2.6), gridspec_kw={"width_ratios": [1.3, 1]})
    y = np.arange(len(rows))[::-1]
    for yi, r in zip(y, rows):
        ax.errorbar(r["diff"], yi, xerr=[[r["diff"] - r["lo"]], [r["hi"] - r["diff"]]], fmt="o", color="black",
                    capsize=4)
        ax.annotate(f"{r['diff']:+.3f} [{r['lo']:+.3f}, {r['hi']:+.3f}]", (r["diff"], yi), xytext=(0, 8),
                    textcoords="offset points", ha="center", fontsize=8)
    ax.axvline(0, color="grey", lw=1, ls="--")
    ax.set_yticks(y, [r["label"] for r in rows], fontsize=8)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel("Hit@1 difference, arm − baseline (same queries; 95% paired bootstrap CI)")
    ax.set_title("Does the arm change Hit@1?", fontsize=10)
    ax.grid(axis="x", alpha=0.3)

    first = rerank[rerank["arm"] == "first stage"]
    reranked = rerank[rerank["arm"] != "first stage"]
    costs = []
    if len(first):
        costs.append(("first stage (router)", float(first["seconds_per_query_p50"].iloc[0]), CALL_COLOR))
    if len(reranked):
        costs.append((f"{reranked['arm'].iloc[0]}", float(reranked["seconds_per_query_p50"].iloc[0]), "#C44E52"))
    cy = np.arange(len(costs))[::-1]
    bx.barh(cy, [c[1] for c in costs], color=[c[2] for c in costs])
    for yi, (_, seconds, _) in zip(cy, costs):
        bx.text(seconds * 1.15, yi, f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s", va="center",
                fontsize=8)
    bx.set_xscale("log")
    if costs:
        bx.set_xlim(min(c[1] for c in costs) / 3, max(c[1] for c in costs) * 8)
    bx.set_yticks(cy, [c[0] for c in costs], fontsize=8)
    bx.set_xlabel("seconds per query (median, log scale)")
    one_off = ""
    aug = augmentation.dropna(subset=["hit@1_diff"])
    if len(aug) and "generation_seconds" in aug.columns:
        r = aug.iloc[0]
        extra = ""
        if augmentation_cost:
            extra = (f", {int(augmentation_cost['examples_added'])} examples kept from "
                     f"{int(augmentation_cost['llm_calls'])} LLM calls")
        one_off = (f"\nsynthetic examples (not drawn): one-off {r['generation_seconds']:.0f} s generation{extra},\n"
                   f"{r['index_seconds']:.1f} s index; per query the router alone (not timed separately)")
    bx.set_title("What each arm costs per query" + one_off, fontsize=9)
    bx.grid(axis="x", alpha=0.3)
    fig.suptitle("Card improvement: paired Hit@1 differences and cost (Hit@1 over the call rows of each split)")
    fig.tight_layout()
    return _save(fig, path)


def pareto_figure(table: pd.DataFrame, default_arm: str | None = None, metric: str = "hit@1",
                  choose_on: Sequence[str] = ("dev", "tune"), report_on: str = "test", path: str | Path | None = None):
    """`latency_pareto.latency_pareto`'s table drawn: each arm's route time (log scale) against its `metric` on the choice
    splits (filled dots, the frontier as a step line), with the same arm on `report_on` just right of it
    (hollow, with its 95% CI) to show, not to choose by. Left: every arm; right: the arms near the
    frontier, the frontier arms and the default named (the default ringed in black)."""
    choice = f"{metric}_{'+'.join(choose_on)}"
    shown, lo, hi = f"{metric}_{report_on}", f"{metric}_lo_{report_on}", f"{metric}_hi_{report_on}"
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), gridspec_kw={"width_ratios": [1, 1.4]})
    if table.empty:
        axes[0].set_title("No arm has both a route time and a score")
        return _save(fig, path)
    front = table[table["pareto"]].sort_values("route_ms_per_query")
    near = table[table[choice] >= front[choice].min() - 0.03]
    for ax, rows, named in ((axes[0], table, False), (axes[1], near, True)):
        x = rows["route_ms_per_query"].clip(lower=0.01)
        ax.scatter(x, rows[choice], color=CALL_COLOR, zorder=3, label=f"{metric} on {' + '.join(choose_on)} (chosen on)")
        if shown in rows:
            err = None
            if lo in rows and hi in rows:
                err = [(rows[shown] - rows[lo]).clip(lower=0), (rows[hi] - rows[shown]).clip(lower=0)]
            ax.errorbar(x * 1.08, rows[shown], yerr=err, fmt="o", mfc="none", color=NO_CALL_COLOR, capsize=3, zorder=2,
                        label=f"{metric} on {report_on}, 95% CI (shown, not used)")
        ax.step(front["route_ms_per_query"].clip(lower=0.01), front[choice], where="post", color=CALL_COLOR, alpha=0.6,
                label="frontier (no arm both better and faster)")
        ax.set_xscale("log")
        ax.set_xlabel("route ms per test query (log; 02's timing, one pass)")
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
        if not named:
            continue
        labelled = rows[rows["pareto"] | (rows["arm_label"] == default_arm)].sort_values("route_ms_per_query")
        for n, (_, row) in enumerate(labelled.iterrows()):
            is_default = row["arm_label"] == default_arm
            point = (max(row["route_ms_per_query"], 0.01), row[choice])
            ax.annotate(row["arm_label"] + (" (default)" if is_default else ""), point, textcoords="offset points",
                        xytext=(-10, 10 if n % 2 == 0 else -16), ha="right" if n == len(labelled) - 1 else "left",
                        fontsize=8, fontweight="bold" if is_default else "normal",
                        arrowprops={"arrowstyle": "-", "color": "grey", "lw": 0.5})
            if is_default:
                ax.scatter([point[0]], [point[1]], s=140, facecolors="none", edgecolors=DEFAULT_COLOR, linewidths=2, zorder=4)
    axes[0].set_title(f"All {len(table)} arms")
    axes[1].set_title(f"The {len(near)} arms within 0.03 of the frontier")
    axes[1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=8)  # below: covers no data
    fig.suptitle(f"Accuracy against route time, frontier drawn on {' + '.join(choose_on)} ({report_on} only shown)")
    fig.tight_layout()
    return _save(fig, path)
