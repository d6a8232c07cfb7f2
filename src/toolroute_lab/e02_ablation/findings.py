"""The findings of notebook 02 (ToolCard ablation) in a few sentences, written from its tables for the report."""

from __future__ import annotations

from typing import Any

import pandas as pd

from toolroute_lab.e02_ablation.breakdowns import with_holm
from toolroute_lab.e02_ablation import TOOLCARD_ABLATION
from toolroute_lab.shared.run_tables import ci


def ablation(run: Any, default_arm: str) -> list[str]:
    test = run.table(TOOLCARD_ABLATION.notebook, "ablation_test")
    if test is None or default_arm not in set(test["arm_label"]):
        return []
    d = test.set_index("arm_label").loc[default_arm]
    paired = run.table(TOOLCARD_ABLATION.notebook, "paired_test")
    n = f"'s {int(paired['n'].iloc[0])} call queries" if paired is not None and len(paired) else ""
    out = [f"The default arm {default_arm} reaches, on test{n}, Hit@1 {d['hit@1']:.3f} {ci(d['hit@1_lo'], d['hit@1_hi'])}, "
           f"Recall@5 {d['recall@5']:.3f} {ci(d['recall@5_lo'], d['recall@5_hi'])} and MRR {d['mrr']:.3f} "
           f"{ci(d['mrr_lo'], d['mrr_hi'])} (95% bootstrap CIs)" + _kinds_clause(run, default_arm) + "."]
    ranked = test.sort_values("hit@1", ascending=False).reset_index(drop=True)
    rank = int(ranked.index[ranked["arm_label"] == default_arm][0]) + 1
    top = ranked.iloc[0]
    families = test.groupby("arm")["hit@1"].max().sort_values(ascending=False)
    out.append(f"It ranks {rank} of {len(test)} arms by test Hit@1 (best: {top['arm_label']}, {top['hit@1']:.3f}); "
               "the best arm of each family: " + ", ".join(f"{a} {v:.3f}" for a, v in families.items()) + ".")
    by_split = run.table(TOOLCARD_ABLATION.notebook, "ablation_by_split")
    dev = run.table(TOOLCARD_ABLATION.notebook, "ablation_dev")
    if by_split is not None and default_arm in set(by_split["arm_label"]):
        mine = by_split[by_split["arm_label"] == default_arm]
        out.append("Across the splits the same arm's Hit@1 is " + ", ".join(
            f"{r['split']} {r['hit@1']:.3f} {ci(r['hit@1_lo'], r['hit@1_hi'])}" for _, r in mine.iterrows())
            + " (cards and settings were tuned on dev).")
    elif dev is not None and default_arm in set(dev["arm_label"]):
        dv = float(dev.set_index("arm_label").loc[default_arm, "hit@1"])
        out.append(f"On dev, where cards and settings were tuned, the same arm reaches Hit@1 {dv:.3f}, "
                   f"{dv - d['hit@1']:+.3f} against test.")
    out.append(f"The no-call rule (fitted on the calib split) answers {d['no_call_accuracy']:.3f} of the no-call queries "
               f"{ci(d['no_call_accuracy_lo'], d['no_call_accuracy_hi'])} and refuses {d['false_no_call_rate']:.3f} of "
               f"real calls {ci(d['false_no_call_rate_lo'], d['false_no_call_rate_hi'])}" + _auc_clause(run, default_arm)
               + ".")
    if paired is not None and len(paired) and "p_value" in paired.columns:
        paired = with_holm(paired)
        raw = paired[paired["p_value"] < 0.05]
        kept = paired[paired["holm_reject"].astype(bool)]
        raw_better = raw[raw["diff"] > 0]
        named = "; ".join(f"{r['arm_label']} {r['metric']} {r['diff']:+.3f} {ci(r['ci_low'], r['ci_high'])}"
                          for _, r in raw_better.iterrows())
        out.append(f"Of the {len(paired)} paired comparisons with the default ({paired['arm_label'].nunique()} arms × "
                   f"{paired['metric'].nunique()} metrics), {len(raw)} have p < 0.05 uncorrected, "
                   f"{len(raw_better)} of them in favour of the other arm" + (f" ({named})" if named else "")
                   + f"; after Holm's correction {len(kept)} remain, {int((kept['diff'] > 0).sum())} in favour of "
                   "the other arm.")
    writer = _writer_sentence(run, default_arm)
    if writer:
        out.append(writer)
    representation = _representation_sentence(run)
    if representation:
        out.append(representation)
    return out


def _representation_sentence(run: Any, split: str = "test") -> str:
    """Single vs multi-vector with the aggregation and retriever held fixed (representation.csv), on `split`."""
    table = run.table(TOOLCARD_ABLATION.notebook, "representation")
    if table is None or table.empty:
        return ""
    rows = table[(table["split"] == split) & (table["metric"] == "hit@1")]
    if rows.empty:
        return ""
    held = rows[rows["holm_reject"].astype(bool)]
    cells = "; ".join(f"{r['retriever']} {r['aggregation']} {r['diff']:+.3f} {ci(r['diff_lo'], r['diff_hi'])} "
                      f"(exact McNemar p {r['p_mcnemar']:.2g})" for _, r in rows.iterrows())
    verdict = (f"{len(held)} of {len(rows)} differences hold after Holm" if len(held)
               else f"none of the {len(rows)} differences holds after Holm")
    return (f"Single vs multi-vector cards with the aggregation and retriever held fixed ({split}, n={int(rows['n'].iloc[0])} "
            f"call rows, Hit@1 multi − single): {cells}; {verdict}.")


def _kinds_clause(run: Any, default_arm: str) -> str:
    """", by row kind: …" for the default arm on test from by_row_kind.csv ("" when it is not in the run)."""
    kinds = run.table(TOOLCARD_ABLATION.notebook, "by_row_kind")
    if kinds is None:
        return ""
    mine = kinds[(kinds["arm_label"] == default_arm) & (kinds["split"] == "test")].set_index("kind")
    names = {"single": "single-tool", "confusion": "confusion-pair (single-tool)"}
    parts = [f"{names[kind]} Hit@1 {mine.loc[kind, 'hit@1']:.3f} (n={int(mine.loc[kind, 'n'])})"
             for kind in names if kind in mine.index]
    if "multi" in mine.index:
        m = mine.loc["multi"]
        parts.append(f"multi-tool Hit@1 {m['hit@1']:.3f} and Recall@5 {m['recall@5']:.3f} (n={int(m['n'])}; "
                     "Recall@1 is 0 on them by definition)")
    return "; by row kind: " + ", ".join(parts) if parts else ""


def _auc_clause(run: Any, default_arm: str) -> str:
    roc = run.table(TOOLCARD_ABLATION.notebook, "no_call_roc_test")
    if roc is None or default_arm not in set(roc["arm_label"]):
        return ""
    r = roc.set_index("arm_label").loc[default_arm]
    return (f"; over every threshold its P(call) separates the two with ROC AUC {r['auc']:.3f} "
            f"{ci(r['auc_lo'], r['auc_hi'])}")


def _writer_sentence(run: Any, default_arm: str) -> str:
    """Writer B against writer A's untuned splits for the default arm, from by_writer.csv: over all rows and
    over the row kinds both wrote."""
    writers = run.table(TOOLCARD_ABLATION.notebook, "by_writer")
    if writers is None or "hit@1_gap" not in writers.columns:
        return ""
    mine = writers[writers["arm_label"] == default_arm]
    other = mine[mine["hit@1_gap"].notna()]
    if other.empty:
        return ""
    b = other.iloc[0]
    base_splits = str(b["gap_vs"]).split(": ", 1)[-1]
    base = mine[mine["splits"] == base_splits]
    a = f" against {base.iloc[0]['hit@1']:.3f} on writer A's {base_splits}" if len(base) else ""
    out = (f"By query writer: on writer {b['writer']}'s {b['splits']} ({int(b['n_call'])} call rows) the default reaches "
           f"Hit@1 {b['hit@1']:.3f}{a}, a gap of {b['hit@1_gap']:+.3f} {ci(b['hit@1_gap_lo'], b['hit@1_gap_hi'])}")
    if "hit@1_gap_same_kinds" in b and pd.notna(b["hit@1_gap_same_kinds"]) and len(base):
        missing = [k for k in str(base.iloc[0]["kinds"]).split(",") if k not in str(b["same_kinds"]).split(",")]
        if missing:
            out += (f"; writer {b['writer']} wrote no {', '.join(k.replace('_', '-') for k in missing)} rows, and over the "
                    f"kinds both wrote ({str(b['same_kinds']).replace('_', '-').replace(',', ', ')}) the gap is "
                    f"{b['hit@1_gap_same_kinds']:+.3f} {ci(b['hit@1_gap_same_kinds_lo'], b['hit@1_gap_same_kinds_hi'])}")
    return out + "."
