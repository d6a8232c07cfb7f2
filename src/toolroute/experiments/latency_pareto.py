"""Accuracy against route time: which arms of the ablation no other arm beats on both.

Kept apart from `breakdowns` (which 03's notebook loads through `plots`): a change here must not
change the code digest that the agent experiments' checkpoints are tagged with.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import pandas as pd


def latency_pareto(by_split: pd.DataFrame, timing: pd.DataFrame, choose_on: Sequence[str] = ("dev", "tune"),
                   report_on: str = "test", metric: str = "hit@1") -> pd.DataFrame:
    """Each arm's `metric` on the splits a choice may be made on (their query-weighted mean) and on
    `report_on` (with its CI), beside its route time per query; `pareto` marks the arms no other arm
    beats on both the choice metric and the time (a tie in one and better in the other beats).
    The frontier is drawn on the choice splits, never on `report_on`."""
    if timing.empty or by_split.empty:
        return pd.DataFrame()
    chosen = by_split[by_split["split"].isin(choose_on)]
    sums = chosen.assign(weighted=chosen[metric] * chosen["n_call"]).groupby("arm_label")[["weighted", "n_call"]].sum()
    choice = (sums["weighted"] / sums["n_call"]).rename(f"{metric}_{'+'.join(choose_on)}")
    shown = by_split[by_split["split"] == report_on].set_index("arm_label")[[metric, f"{metric}_lo", f"{metric}_hi"]]
    shown.columns = [f"{c}_{report_on}" for c in shown.columns]
    ms = timing.set_index("arm_label")["route_ms_per_query_batched"].rename("route_ms_per_query")
    table = pd.concat([choice, shown, ms], axis=1, join="inner").reset_index().rename(columns={"index": "arm_label"})
    score, time_ = table[choice.name].to_numpy(), table["route_ms_per_query"].to_numpy()
    table["pareto"] = [not any((score[j] >= score[i] and time_[j] <= time_[i]) and (score[j] > score[i] or time_[j] < time_[i])
                               for j in range(len(table)) if j != i) for i in range(len(table))]
    return table.sort_values("route_ms_per_query", ignore_index=True)


def pareto_figure(table: pd.DataFrame, default_arm: str | None = None, metric: str = "hit@1",
                  choose_on: Sequence[str] = ("dev", "tune"), report_on: str = "test", path: str | Path | None = None):
    """`latency_pareto`'s table drawn: each arm's route time (log scale) against its `metric` on the choice
    splits (filled dots, the frontier as a step line), with the same arm on `report_on` just right of it
    (hollow, with its 95% CI) to show, not to choose by. Left: every arm; right: the arms near the
    frontier, the frontier arms and the default named (the default ringed in black)."""
    import matplotlib  # drawn only where a figure is asked for

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: E402 - after the backend

    choice = f"{metric}_{'+'.join(choose_on)}"
    shown, lo, hi = f"{metric}_{report_on}", f"{metric}_lo_{report_on}", f"{metric}_hi_{report_on}"
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), gridspec_kw={"width_ratios": [1, 1.4]})
    if table.empty:
        axes[0].set_title("No arm has both a route time and a score")
        return fig
    front = table[table["pareto"]].sort_values("route_ms_per_query")
    near = table[table[choice] >= front[choice].min() - 0.03]
    for ax, rows, named in ((axes[0], table, False), (axes[1], near, True)):
        x = rows["route_ms_per_query"].clip(lower=0.01)
        ax.scatter(x, rows[choice], color="#4C72B0", zorder=3, label=f"{metric} on {' + '.join(choose_on)} (chosen on)")
        if shown in rows:
            err = None
            if lo in rows and hi in rows:
                err = [(rows[shown] - rows[lo]).clip(lower=0), (rows[hi] - rows[shown]).clip(lower=0)]
            ax.errorbar(x * 1.08, rows[shown], yerr=err, fmt="o", mfc="none", color="#DD8452", capsize=3, zorder=2,
                        label=f"{metric} on {report_on}, 95% CI (shown, not used)")
        ax.step(front["route_ms_per_query"].clip(lower=0.01), front[choice], where="post", color="#4C72B0", alpha=0.6,
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
                ax.scatter([point[0]], [point[1]], s=140, facecolors="none", edgecolors="black", linewidths=2, zorder=4)
    axes[0].set_title(f"All {len(table)} arms")
    axes[1].set_title(f"The {len(near)} arms within 0.03 of the frontier")
    axes[1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=8)  # below: covers no data
    fig.suptitle(f"Accuracy against route time, frontier drawn on {' + '.join(choose_on)} ({report_on} only shown)")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    return fig
