"""02's statistics beyond the pooled test table (issue 23 item 5, issue 25 build 3).

Each function takes the routed rows of the grid (`RoutedRow`s, the queries they answer, the no-call rule's
P(call)) and returns a table; the notebook writes it, the report reads it, and a figure in `plots` draws
it. Nothing here routes a query or loads a model, so every table can be recomputed from a hand-made
fixture.

- `split_table`: every arm on every split (dev, tune, calib, test) with 95% bootstrap CIs, what each
  split is for (`SPLIT_ROLES`) and who wrote it (`SPLIT_WRITER`).
- `writer_table`: the main arms by query writer (dev, calib and test come from writer A, tune from
  writer B; docs/design.md "Data and splits"), with the gap B − A and its 95% CI (unpaired: the writers
  wrote different queries). Writer B wrote only a tuning split, so the gap against A's test split is a
  writer gap and a tuning gap at once.
- `kind_table`: single-tool, confusion-pair, multi-tool and no-call rows (the queries' `kind` field) as
  separate lines: ranking metrics for the call kinds, false no-call for the call kinds and no-call
  accuracy for the no-call kind. Recall@1 on a multi-tool row is 0 by definition (its two or more
  expected tools cannot all be in the top 1); the table's `note` says so.
- `no_call_decisions` / `roc_curve` / `risk_coverage` / `no_call_summary`: the no-call decision as a
  score (P(call) of the rule fitted on calib) swept over every threshold: the ROC (no-call rows refused
  against call rows refused) and the risk–coverage curve (share of routed rows routed wrongly against
  the share routed), with the fitted threshold's operating point and Wilson intervals.
- `tool_recall`: Recall@1 and Recall@5 per tool over the single-tool rows expecting it, with Wilson CIs.
- `with_holm`: Holm's correction over a paired-comparison table, with the decision at level alpha.
- `representation_table`: single vs multi-vector cards with the aggregation and the retriever held
  fixed (the factorial: multi − single under max, top2 and mean, for dense and hybrid), paired on the
  same queries, with exact McNemar and Holm over the family of each split and metric.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from toolroute.evaluation.metrics import (DEFAULT_KS, RoutedRow, bootstrap_ci, holm_adjusted, mcnemar_exact,
                                          paired_comparison, row_scores, summarize, unpaired_difference,
                                          wilson_interval)

HOLM_ALPHA = 0.05
SPLIT_WRITER = {"dev": "A", "calib": "A", "test": "A", "tune": "B"}
"""Who wrote each insurance split (docs/design.md, "Data and splits")."""
TUNED_ON = ("dev", "tune", "calib")
"""The tuning splits: cards and settings were chosen on them (dev, tune), or rules fitted and levers
checked on them (calib), so their numbers are optimistic. Only test measures."""
FITTED_ON = "calib"
"""The split every no-call rule is fitted on (`routing.default_dev_file`): its no-call figures are in-sample."""
SPLIT_ROLES = {
    "dev": "tuning: cards and settings tuned here",
    "tune": "tuning: another writer; the cascade and the product_search change were chosen here",
    "calib": "tuning: the no-call rule is fitted here (no-call figures in-sample); levers were checked here",
    "test": "measuring: read during development, so not a sealed held-out set",
}
KINDS = ("single", "confusion", "multi", "no_call")
KIND_NOTES = {
    "single": "one expected tool",
    "confusion": "one expected tool, written against a look-alike tool (the query's pair)",
    "multi": "two or more expected tools: Recall@k needs all of them in the top k, so Recall@1 is 0 by "
             "definition; Hit@1 counts any expected tool at rank 1",
    "no_call": "no tool expected: only no-call accuracy applies",
}
GAP_METRICS = ("hit@1", "recall@5", "mrr")


def metric_columns(metrics: dict, ci: dict, ks: Sequence[int] = DEFAULT_KS) -> dict:
    """The metric columns of a table row: each metric, then its 95% CI as `<metric>_lo` / `<metric>_hi`."""
    row = {}
    for key in [f"recall@{k}" for k in ks] + ["hit@1", "mrr", "no_call_accuracy", "false_no_call_rate", "right_call"]:
        row[key] = metrics[key]
        row[f"{key}_lo"], row[f"{key}_hi"] = ci[key]
    return row


def subset_metrics(rows: Sequence[RoutedRow], ks: Sequence[int] = DEFAULT_KS, n_boot: int = 2000) -> dict:
    """Counts and metric columns (95% bootstrap CIs, seeded) of a set of rows."""
    n_call = sum(bool(r.expected) for r in rows)
    return {"n": len(rows), "n_call": n_call, "n_no_call": len(rows) - n_call,
            **metric_columns(summarize(rows, ks), bootstrap_ci(rows, ks, n_boot=n_boot), ks)}


def with_holm(paired: pd.DataFrame, alpha: float = HOLM_ALPHA) -> pd.DataFrame:
    """`paired` with `p_holm` (Holm-adjusted over every row with a p-value: one family) and `holm_reject`
    (p_holm < alpha: the difference holds family-wise) after `p_value`; a table that has them is returned
    as it is."""
    if paired.empty or "p_value" not in paired.columns or "p_holm" in paired.columns:
        return paired
    out = paired.copy()
    at = out.columns.get_loc("p_value") + 1
    out.insert(at, "p_holm", holm_adjusted(out["p_value"].tolist()))
    out.insert(at + 1, "holm_reject", out["p_holm"] < alpha)
    return out


def main_arms(wanted: Sequence[str], labels: Sequence[str], default_arm: str) -> list[str]:
    """The arms the breakdowns report: the default first, then each of `wanted` the grid has (in order)."""
    if default_arm not in labels:
        raise ValueError(f"default_arm: {default_arm!r} is not an arm of the grid ({sorted(labels)})")
    return list(dict.fromkeys([default_arm, *[a for a in wanted if a in labels]]))


# --- per split ----------------------------------------------------------------------------------------------------

def split_table(tables: Mapping[str, pd.DataFrame], queries: Mapping[str, Sequence]) -> pd.DataFrame:
    """The arm tables of each split (`ablation.results_table`) stacked, each row led by its split, the
    split's writer and role, and its row counts (n, call rows, no-call rows)."""
    parts = []
    for split, table in tables.items():
        q = queries[split]
        n_call = sum(bool(x.expected_tools) for x in q)
        lead = {"split": split, "writer": SPLIT_WRITER.get(split, "?"), "role": SPLIT_ROLES.get(split, ""),
                "n": len(q), "n_call": n_call, "n_no_call": len(q) - n_call}
        part = table.copy()
        for i, (column, value) in enumerate(lead.items()):
            part.insert(1 + i, column, value)
        parts.append(part)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


# --- per writer ---------------------------------------------------------------------------------------------------

def writer_groups(splits: Sequence[str]) -> list[tuple[str, str, tuple[str, ...]]]:
    """(writer, which splits, splits) for each writer: all its splits, and (when it differs) only those no
    one tuned on."""
    groups = []
    for writer in sorted({SPLIT_WRITER[s] for s in splits if s in SPLIT_WRITER}):
        mine = tuple(s for s in splits if SPLIT_WRITER.get(s) == writer)
        groups.append((writer, "all", mine))
        untuned = tuple(s for s in mine if s not in TUNED_ON)
        if untuned and untuned != mine:
            groups.append((writer, "not tuned on", untuned))
    return groups


def writer_table(rows: Mapping[str, Mapping[str, Sequence[RoutedRow]]], arms: Sequence[str],
                 queries: Mapping[str, Sequence], ks: Sequence[int] = DEFAULT_KS, n_boot: int = 2000) -> pd.DataFrame:
    """Per arm and writer group (`writer_groups` of the splits in `rows`, {split: {arm: rows}} in the order
    of `queries[split]`): counts, metrics and 95% bootstrap CIs over the group's rows pooled, and the row
    kinds it holds (`kinds`). On every other writer's rows, the gap to writer A's untuned splits for
    `GAP_METRICS` with its unpaired 95% bootstrap CI, twice: over all rows (`<metric>_gap`) and over the
    kinds both groups hold (`same_kinds`, `<metric>_gap_same_kinds`), since writers differ in what they
    wrote as well as how; NaN on writer A's rows (and `gap_vs` empty)."""
    groups = writer_groups(list(rows))
    base = next((g for g in groups if g[0] == "A" and g[1] == "not tuned on"), None) or \
        next((g for g in groups if g[0] == "A"), None)
    kinds = {s: [row_kind(q) for q in queries[s]] for s in rows}
    records = []
    for arm in arms:
        for s in rows:
            _check_order(rows[s][arm], queries[s], f"writer_table: the {s} rows of {arm}")
        pooled = {g: [(r, k) for s in g[2] for r, k in zip(rows[s][arm], kinds[s])] for g in groups}
        for group in groups:
            writer, which, splits = group
            held = [k for k in KINDS if any(k == kind for _, kind in pooled[group])]
            record = {"arm_label": arm, "writer": writer, "splits": ",".join(splits), "which": which,
                      "tuned_on": any(s in TUNED_ON for s in splits), "kinds": ",".join(held),
                      **subset_metrics([r for r, _ in pooled[group]], ks, n_boot)}
            other = base is not None and writer != base[0]
            shared = [k for k in held if other and any(k == kind for _, kind in pooled[base])]
            record.update({"gap_vs": f"A: {','.join(base[2])}" if other else "", "same_kinds": ",".join(shared)})
            for suffix, keep in (("", None), ("_same_kinds", set(shared))):
                a = [r for r, k in pooled[base] if keep is None or k in keep] if other else []
                b = [r for r, k in pooled[group] if keep is None or k in keep] if other else []
                for metric in GAP_METRICS:
                    gap = unpaired_difference(a, b, metric, ks, n_boot=n_boot) if other else {}
                    record.update({f"{metric}_gap{suffix}": gap.get("diff", np.nan),
                                   f"{metric}_gap{suffix}_lo": gap.get("ci_low", np.nan),
                                   f"{metric}_gap{suffix}_hi": gap.get("ci_high", np.nan)})
            records.append(record)
    return pd.DataFrame.from_records(records)


def _check_order(rows: Sequence[RoutedRow], queries: Sequence, what: str) -> None:
    if [r.id for r in rows] != [q.id for q in queries]:
        raise ValueError(f"{what} are not in the order of its queries")


# --- per row kind -------------------------------------------------------------------------------------------------

def row_kind(query) -> str:
    """The query's `kind` when it is one of `KINDS`, else from its expected tools (single, multi, no_call)."""
    if query.kind in KINDS:
        return query.kind
    n = len(query.expected_tools)
    return "no_call" if n == 0 else "single" if n == 1 else "multi"


def kind_table(rows: Mapping[str, Mapping[str, Sequence[RoutedRow]]], queries: Mapping[str, Sequence],
               arms: Sequence[str], ks: Sequence[int] = DEFAULT_KS, n_boot: int = 2000) -> pd.DataFrame:
    """Per arm, split ({split: {arm: rows}}, the rows in the order of `queries[split]`) and row kind
    (`KINDS` order, kinds the split has): counts, metrics, 95% bootstrap CIs and the kind's note."""
    records = []
    for arm in arms:
        for split, by_arm in rows.items():
            kinds = [row_kind(q) for q in queries[split]]
            routed = list(by_arm[arm])
            _check_order(routed, queries[split], f"kind_table: the {split} rows of {arm}")
            for kind in [k for k in KINDS if k in kinds]:
                part = [r for r, k in zip(routed, kinds) if k == kind]
                note = KIND_NOTES[kind] + ("; no-call rule fitted on these rows" if split == FITTED_ON else "")
                records.append({"arm_label": arm, "split": split, "kind": kind, **subset_metrics(part, ks, n_boot),
                                "note": note})
    return pd.DataFrame.from_records(records)


# --- the no-call decision as a score --------------------------------------------------------------------------------

def no_call_decisions(arm: str, rows: Sequence[RoutedRow], call_probability: Sequence[float | None],
                      queries: Sequence, threshold: float | None) -> pd.DataFrame:
    """One line per query of an arm: its kind, whether it expects a call, the rule's P(call) (NaN when the
    arm has no rule), the decision taken, whether the top-1 is an expected tool, and the fitted threshold."""
    return pd.DataFrame({
        "arm_label": arm, "id": [r.id for r in rows], "kind": [row_kind(q) for q in queries],
        "is_call": [bool(r.expected) for r in rows],
        "call_probability": [np.nan if p is None else float(p) for p in call_probability],
        "no_call_predicted": [bool(r.no_call_predicted) for r in rows],
        "top1_right": [bool(r.expected) and bool(r.ranked) and r.ranked[0] in r.expected for r in rows],
        "threshold": np.nan if threshold is None else float(threshold)})


def decisions_of(results: Mapping, arms: Sequence[str], queries: Sequence) -> pd.DataFrame:
    """`no_call_decisions` of each of `arms` in `results` ({arm: ablation.ArmResult}), stacked."""
    return pd.concat([no_call_decisions(arm, results[arm].rows, [r.call_probability for r in results[arm].results],
                                        queries, results[arm].threshold) for arm in arms], ignore_index=True)


def roc_curve(decisions: pd.DataFrame) -> pd.DataFrame:
    """For every cut t of P(call) (no call when P(call) < t), from refusing nothing to refusing everything:
    the share of call rows refused (false no-call rate, x) and of no-call rows refused (no-call accuracy, y)."""
    p = decisions["call_probability"].to_numpy(dtype=float)
    call = decisions["is_call"].to_numpy(dtype=bool)
    cuts = np.concatenate([[-np.inf], np.unique(p), [np.inf]])
    refused = p[None, :] < cuts[:, None]
    return pd.DataFrame({"cut": cuts, "false_no_call_rate": refused[:, call].mean(axis=1),
                         "no_call_accuracy": refused[:, ~call].mean(axis=1)})


def risk_coverage(decisions: pd.DataFrame) -> pd.DataFrame:
    """For every cut of P(call) that routes at least one row: coverage (share of all rows routed to a tool)
    and risk (share of the routed rows routed wrongly: a no-call row, or a call row whose top-1 is not an
    expected tool), with the counts."""
    p = decisions["call_probability"].to_numpy(dtype=float)
    wrong = ~(decisions["is_call"].to_numpy(dtype=bool) & decisions["top1_right"].to_numpy(dtype=bool))
    cuts = np.unique(p)
    routed = p[None, :] >= cuts[:, None]
    n_routed = routed.sum(axis=1)
    n_wrong = (routed & wrong[None, :]).sum(axis=1)
    return pd.DataFrame({"cut": cuts, "routed": n_routed, "wrong": n_wrong, "coverage": n_routed / len(p),
                         "risk": n_wrong / n_routed})


def roc_auc(decisions: pd.DataFrame) -> float:
    """The area under `roc_curve`: the chance that a random no-call row gets a lower P(call) than a random
    call row (ties count one half)."""
    return _auc(decisions["call_probability"].to_numpy(dtype=float), decisions["is_call"].to_numpy(dtype=bool))


def _auc(p: np.ndarray, call: np.ndarray) -> float:
    pos, neg = p[~call], p[call]
    if not len(pos) or not len(neg):
        return float("nan")
    return float(((pos[:, None] < neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum())
                 / (len(pos) * len(neg)))


def _auc_ci(decisions: pd.DataFrame, n_boot: int, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap CI of the AUC, call and no-call rows resampled separately (seeded)."""
    p = decisions["call_probability"].to_numpy(dtype=float)
    is_call = decisions["is_call"].to_numpy(dtype=bool)
    call, none = np.flatnonzero(is_call), np.flatnonzero(~is_call)
    if not len(call) or not len(none):
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_boot):
        idx = np.concatenate([rng.choice(call, len(call)), rng.choice(none, len(none))])
        values.append(_auc(p[idx], is_call[idx]))
    return float(np.quantile(values, 0.025)), float(np.quantile(values, 0.975))


def no_call_summary(decisions: pd.DataFrame, n_boot: int = 2000) -> pd.DataFrame:
    """Per arm: the ROC AUC of P(call) with its 95% bootstrap CI, and at the fitted threshold (the decisions
    taken) the no-call accuracy, false no-call rate, coverage and risk, each rate with its count and 95%
    Wilson interval; the risk when every row is routed, for comparison."""
    records = []
    for arm, d in decisions.groupby("arm_label", sort=False):
        call = d["is_call"].to_numpy(dtype=bool)
        refused = d["no_call_predicted"].to_numpy(dtype=bool)
        wrong = ~(call & d["top1_right"].to_numpy(dtype=bool))
        lo, hi = _auc_ci(d, n_boot)
        record = {"arm_label": arm, "n": len(d), "n_call": int(call.sum()), "n_no_call": int((~call).sum()),
                  "threshold": float(d["threshold"].iloc[0]), "auc": roc_auc(d), "auc_lo": lo, "auc_hi": hi}
        for name, k, n in (("no_call_accuracy", (refused & ~call).sum(), (~call).sum()),
                           ("false_no_call_rate", (refused & call).sum(), call.sum()),
                           ("risk", (~refused & wrong).sum(), (~refused).sum()),
                           ("risk_all_routed", wrong.sum(), len(d))):
            k, n = int(k), int(n)
            record.update({f"{name}_count": k, name: k / n if n else np.nan,
                           **dict(zip((f"{name}_lo", f"{name}_hi"), wilson_interval(k, n)))})
        record["coverage"] = float((~refused).mean())
        records.append(record)
    return pd.DataFrame.from_records(records)


# --- per tool -----------------------------------------------------------------------------------------------------

def tool_recall(rows: Sequence[RoutedRow], modules: Mapping[str, str], ks: Sequence[int] = (1, 5)) -> pd.DataFrame:
    """Per tool of `modules` (tool → module; by module, then name): over the single-tool rows expecting it,
    n and Recall@k (the tool in the top k) with counts and 95% Wilson intervals; and the multi-tool rows
    that include it (`n_multi`), with how many had it in the top max(k) (`multi_in_top<k>`)."""
    top = max(ks)
    records = []
    for tool in sorted(modules, key=lambda t: (modules[t], t)):
        single = [r for r in rows if r.expected == (tool,)]
        multi = [r for r in rows if len(r.expected) > 1 and tool in r.expected]
        record = {"tool": tool, "module": modules[tool], "n": len(single)}
        for k in ks:
            hits = sum(tool in r.ranked[:k] for r in single)
            lo, hi = wilson_interval(hits, len(single))
            record.update({f"recall@{k}_count": hits, f"recall@{k}": hits / len(single) if single else np.nan,
                           f"recall@{k}_lo": lo, f"recall@{k}_hi": hi})
        record.update({"n_multi": len(multi), f"multi_in_top{top}": sum(tool in r.ranked[:top] for r in multi)})
        records.append(record)
    return pd.DataFrame.from_records(records)


# --- single vs multi-vector, unconfounded ------------------------------------------------------------------------

REPRESENTATION_METRICS = ("hit@1", "right_call")
REPRESENTATION_COLUMNS = ("retriever", "aggregation", "metric", "single", "multi", "n", "single_value", "multi_value",
                          "diff", "diff_lo", "diff_hi", "single_only", "multi_only", "p_mcnemar", "p_holm",
                          "holm_reject")


def representation_table(rows: Mapping[str, Sequence[RoutedRow]], labels: Mapping[tuple[str, str, str], str],
                         metrics: Sequence[str] = REPRESENTATION_METRICS, n_boot: int = 5000) -> pd.DataFrame:
    """Multi-vector minus single-vector cards with everything else fixed: per (retriever, aggregation) of
    `labels` ({(retriever, representation, aggregation): arm label}), the paired difference on the same
    queries (`rows`: {arm label: routed rows}) with its 95% bootstrap CI, the rows only one side got right
    and the exact McNemar p; Holm over the family of each metric (`p_holm`). A single-vector card is one
    record, so its aggregations are one arm: the single side of every aggregation is the same rows.
    Cells whose arm the grid lacks are left out."""
    records = []
    for (retriever, representation, aggregation), multi_label in labels.items():
        if representation != "multi":
            continue
        # one record per card: every aggregation of the single-vector arm is the same arm, whichever the grid ran
        singles = [label for (r, g, _), label in labels.items() if r == retriever and g == "single" and label in rows]
        if multi_label not in rows or not singles:
            continue
        single_label = labels.get((retriever, "single", aggregation))
        single_label = single_label if single_label in rows else singles[0]
        single, multi = rows[single_label], rows[multi_label]
        for metric in metrics:
            paired = paired_comparison(single, multi, metric, n_boot=n_boot)
            exact = mcnemar_exact([row_scores(r)[metric] for r in single], [row_scores(r)[metric] for r in multi])
            records.append({"retriever": retriever, "aggregation": aggregation, "metric": metric,
                            "single": single_label, "multi": multi_label, "n": paired["n"],
                            "single_value": summarize(single)[metric], "multi_value": summarize(multi)[metric],
                            "diff": paired["diff"], "diff_lo": paired["ci_low"], "diff_hi": paired["ci_high"],
                            "single_only": exact["a_only"], "multi_only": exact["b_only"],
                            "p_mcnemar": exact["p_mcnemar"]})
    table = pd.DataFrame(records, columns=[c for c in REPRESENTATION_COLUMNS if c not in ("p_holm", "holm_reject")])
    table["p_holm"] = (table.groupby("metric")["p_mcnemar"].transform(lambda p: holm_adjusted(list(p)))
                       if len(table) else pd.Series(dtype=float))
    table["holm_reject"] = table["p_holm"] < HOLM_ALPHA
    return table


def representation_effects(table: pd.DataFrame) -> pd.DataFrame:
    """The factorial read two ways, per retriever and metric: the main effect of multi-vector (the mean of
    its differences over the aggregations) and the interaction (the spread of those differences: how much
    the answer to "single or multi?" depends on the aggregation)."""
    return (table.groupby(["retriever", "metric"], sort=False)["diff"]
            .agg(main_effect="mean", lowest="min", highest="max")
            .assign(interaction=lambda t: t["highest"] - t["lowest"]).reset_index())
