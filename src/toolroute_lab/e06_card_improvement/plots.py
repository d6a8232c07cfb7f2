"""The figure of notebook 06 (card improvement): each proposal's measured change."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from toolroute_lab.shared.figures import CALL_COLOR, save  # noqa: E402


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
    return save(fig, path)
