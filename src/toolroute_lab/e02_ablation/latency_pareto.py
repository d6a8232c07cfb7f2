"""Accuracy against route time: which arms of the ablation no other arm beats on both.

Kept apart from `breakdowns` (which 03's notebook loads through `plots`): a change here must not
change the code digest that the agent experiments' checkpoints are tagged with.
"""

from __future__ import annotations

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

