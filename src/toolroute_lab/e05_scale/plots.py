"""The figure of notebook 05 (scale): routing quality and latency as the catalogue grows."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from toolroute.evaluation.metrics import wilson_interval  # noqa: E402
from toolroute_lab.shared.figures import DEFAULT_COLOR, save, wilson_err  # noqa: E402


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
    return save(fig, path)


def _bfcl_panel(ax, bfcl: pd.DataFrame):
    cats = list(dict.fromkeys(bfcl["category"]))
    arms = list(dict.fromkeys(bfcl["arm"]))
    width = 0.8 / len(arms)
    for i, arm in enumerate(arms):
        part = bfcl[bfcl["arm"] == arm].set_index("category").reindex(cats)
        x = np.arange(len(cats)) + (i - (len(arms) - 1) / 2) * width
        for metric, alpha, hatch in (("recall@5", 0.35, None), ("hit@1", 0.9, None)):
            p = part[metric].to_numpy()
            err = wilson_err(np.round(p * part["n"]), part["n"], p)
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
