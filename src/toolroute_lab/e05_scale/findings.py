"""The findings of notebook 05 (scale) in a few sentences, written from its tables for the report."""

from __future__ import annotations

from typing import Any

import pandas as pd

from toolroute_lab.e05_scale import SCALE
from toolroute_lab.shared.run_tables import ci


def _latency_note(row: pd.Series) -> str:
    passes = row.get("latency_passes")
    return f"median of {int(passes)} passes" if passes is not None and pd.notna(passes) and passes > 1 else "one pass"


def scale(run: Any) -> list[str]:
    table = run.table(SCALE.notebook, "scale")
    if table is None or table.empty:
        return []
    out = []
    korean = run.table(SCALE.notebook, "korean_crowding")
    if korean is not None and len(korean):
        part = korean[korean["split"] == "test"]
        arms = []
        for arm, rows in part.groupby("arm", sort=False):
            a, b = rows.loc[rows["size"].idxmin()], rows.loc[rows["size"].idxmax()]
            arms.append(f"{arm} Hit@1 {a['hit@1']:.3f} → {b['hit@1']:.3f} (paired change {b['hit@1_diff']:+.3f} "
                        f"{ci(b['hit@1_diff_lo'], b['hit@1_diff_hi'])}, a distractor on top for "
                        f"{b['top1_distractor']:.1%} of call rows, no-call accuracy {a['no_call_accuracy']:.3f} → "
                        f"{b['no_call_accuracy']:.3f})")
        out.append(f"Among Korean tools of other business lines (test split, {int(part['size'].min())} → "
                   f"{int(part['size'].max())} tools): " + "; ".join(arms) + ".")
    smallest, largest = table["size"].min(), table["size"].max()
    for arm, part in table.groupby("arm", sort=False):
        a = part[part["size"] == smallest].iloc[0]
        b = part[part["size"] == largest].iloc[0]
        out.append(f"{arm}: from {int(smallest):,} to {int(largest):,} tools Hit@1 {a['hit@1']:.3f} → {b['hit@1']:.3f}, "
                   f"Recall@5 {a['recall@5']:.3f} → {b['recall@5']:.3f}, MRR {a['mrr']:.4f} → {b['mrr']:.4f}, "
                   f"no-call accuracy {a['no_call_accuracy']:.3f} → {b['no_call_accuracy']:.3f}; route p50 "
                   f"{a['latency_p50_ms']:.1f} → {b['latency_p50_ms']:.1f} ms ({_latency_note(b)}).")
    out.append("The BFCL distractors are English function documents beside Korean cards, so that series measures "
               "robustness to a large foreign catalogue" + (", the Korean one crowding by look-alike tools in the "
                                                            "same language." if korean is not None and len(korean)
                                                            else " rather than crowding by look-alike tools in the "
                                                                 "same language."))
    edits = run.table(SCALE.notebook, "edit_cost")
    if edits is not None and len(edits):
        e = edits.set_index(["size", "arm"])["edit_seconds"]
        out.append("One card edit costs " + ", ".join(
            f"{s:.2f} s ({arm}, {int(size):,} tools)" for (size, arm), s in e.items()) + ".")
    bfcl = run.table(SCALE.notebook, "bfcl_routing")
    if bfcl is not None and len(bfcl):
        pooled = bfcl[bfcl["category"] == "all"] if (bfcl["category"] == "all").any() else bfcl
        best = pooled.loc[pooled["hit@1"].idxmax()]
        out.append(f"On BFCL's own questions ({int(best['n']):,} over {int(best['tools'])} tools) the best arm is "
                   f"{best['arm']}: Hit@1 {best['hit@1']:.3f}, Recall@5 {best['recall@5']:.3f}.")
    return out
