"""The findings of notebook 06 (card improvement) in a few sentences, written from its tables for the report."""

from __future__ import annotations

from typing import Any

import pandas as pd

from toolroute_lab.e06_card_improvement import CARD_IMPROVEMENT
from toolroute_lab.shared.run_tables import ci


def _diff_text(row: pd.Series) -> str:
    return f"{row['hit@1_diff']:+.3f} {ci(row['hit@1_diff_lo'], row['hit@1_diff_hi'])}"


def _call_rows(row: pd.Series) -> int:
    """Hit@1 is over a split's call rows, not all its rows (`n`)."""
    return int(row["n_call"] if "n_call" in row.index and pd.notna(row["n_call"]) else row["n"])


def card_improvement(run: Any) -> list[str]:
    aug = run.table(CARD_IMPROVEMENT.notebook, "augmentation")
    rerank = run.table(CARD_IMPROVEMENT.notebook, "rerank")
    if aug is None and rerank is None:
        return []
    out = []
    cost = run.table(CARD_IMPROVEMENT.notebook, "augmentation_cost")
    if cost is not None and len(cost):
        c = cost.iloc[0]
        out.append(f"The local LLM wrote {int(c['examples_added'])} synthetic examples that survived the filters "
                   f"({int(c['llm_calls'])} calls, {c['seconds']:,.0f} s).")
    excluded = []
    if aug is not None:
        for split, part in aug.groupby("split", sort=False):
            arm = part[part["hit@1_diff"].notna()]
            base = part[part["hit@1_diff"].isna()]
            if len(arm) and len(base):
                a, b = base.iloc[0], arm.iloc[0]
                out.append(f"With them, {split} Hit@1 goes {a['hit@1']:.3f} → {b['hit@1']:.3f} (over the "
                           f"{_call_rows(b)} call rows, paired difference {_diff_text(b)}).")
                excluded.append(b["hit@1_diff_lo"] > 0 or b["hit@1_diff_hi"] < 0)
    if rerank is not None:
        arm, base = rerank[rerank["hit@1_diff"].notna()], rerank[rerank["hit@1_diff"].isna()]
        if len(arm) and len(base):
            a, b = base.iloc[0], arm.iloc[0]
            out.append(f"The arm '{b['arm']}' moves {b['split']} Hit@1 {a['hit@1']:.3f} → {b['hit@1']:.3f} (over the "
                       f"{_call_rows(b)} call rows, paired difference "
                       f"{_diff_text(b)}) at {b['seconds_per_query_p50']:.2f} s per query instead of "
                       f"{a['seconds_per_query_p50'] * 1000:.0f} ms.")
            excluded.append(b["hit@1_diff_lo"] > 0 or b["hit@1_diff_hi"] < 0)
    if excluded:
        out.append(f"{sum(excluded)} of the {len(excluded)} paired differences have a 95% CI that excludes 0.")
    return out
