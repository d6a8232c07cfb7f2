"""The figures of notebook 02 (ToolCard ablation): recall curves, metric bars, routing outcomes, the
confusion by module, the no-call decision, per-tool recall and the latency Pareto front."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from toolroute_lab.e02_ablation.breakdowns import risk_coverage, roc_curve  # noqa: E402
from toolroute_lab.shared.figures import CALL_COLOR, DEFAULT_COLOR, legend_outside, line_styles, save, wilson_err  # noqa: E402


NO_CALL = "(no call)"
NO_CALL_COLOR = "#DD8452"


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
    legend_outside(ax, fontsize=7)
    return save(fig, path)


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
    legend_outside(ax, fontsize=8)
    return save(fig, path)


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
    return save(fig, path)


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
    return save(fig, path)


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
        xerr = wilson_err([p["false_no_call_rate_count"]], [p["n_call"]])
        yerr = wilson_err([p["no_call_accuracy_count"]], [p["n_no_call"]])
        for axis in (ax, zx):
            axis.plot(roc["false_no_call_rate"], roc["no_call_accuracy"], color=color, ls=ls, lw=lw, zorder=z,
                      label=label if axis is ax else None)
            axis.errorbar([p["false_no_call_rate"]], [p["no_call_accuracy"]], xerr=xerr, yerr=yerr, fmt="o",
                          color=color, ms=ms, capsize=3, zorder=z + 1)
        rc = risk_coverage(d).sort_values("coverage")
        bx.plot(rc["coverage"], rc["risk"], color=color, ls=ls, lw=lw, zorder=z)
        routed = int(p["n"] - p["no_call_accuracy_count"] - p["false_no_call_rate_count"])
        bx.errorbar([p["coverage"]], [p["risk"]], yerr=wilson_err([p["risk_count"]], [routed]), fmt="o",
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
    return save(fig, path)


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
                xerr=wilson_err(drawn[f"recall@{k}_count"], drawn["n"]), capsize=1.5,
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
    return save(fig, path)


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
        return save(fig, path)
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
    return save(fig, path)


def representation_plot(table: pd.DataFrame, metric: str = "hit@1", path=None):
    """Multi- minus single-vector cards per aggregation, one panel per split, dense and hybrid side by side:
    the paired difference with its 95% bootstrap CI, a filled marker where it holds after Holm."""
    part = table[table["metric"] == metric]
    if part.empty:  # a grid without both representations (the smoke set): say so instead of an empty axis
        fig, ax = plt.subplots(figsize=(6, 1.5))
        ax.axis("off")
        ax.text(0.5, 0.5, "no single and multi-vector arms with the same aggregation in this grid", ha="center")
        return save(fig, path)
    splits = list(dict.fromkeys(part["split"])) if "split" in part.columns else [None]
    fig, axes = plt.subplots(1, len(splits), figsize=(5.5 * len(splits), 4), sharey=True, squeeze=False)
    aggregations = list(dict.fromkeys(part["aggregation"]))
    for ax, split in zip(axes[0], splits):
        rows = part if split is None else part[part["split"] == split]
        for i, retriever in enumerate(dict.fromkeys(rows["retriever"])):
            mine = rows[rows["retriever"] == retriever].set_index("aggregation").reindex(aggregations)
            x = np.arange(len(aggregations)) + (i - 0.5) * 0.25
            err = [mine["diff"] - mine["diff_lo"], mine["diff_hi"] - mine["diff"]]
            ax.errorbar(x, mine["diff"], yerr=err, fmt="none", capsize=3, color=f"C{i}")
            held = mine["holm_reject"].fillna(False).astype(bool)
            ax.scatter(x[held.values], mine["diff"][held.values], color=f"C{i}", zorder=3, label=f"{retriever} (holds after Holm)")
            ax.scatter(x[~held.values], mine["diff"][~held.values], facecolors="white", edgecolors=f"C{i}", zorder=3,
                       label=f"{retriever}")
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xticks(range(len(aggregations)), aggregations)
        ax.set_xlabel("aggregation of the multi-vector records")
        n = int(rows["n"].iloc[0]) if len(rows) else 0
        ax.set_title(f"{split or ''} (n={n})")
    axes[0][0].set_ylabel(f"{metric}: multi − single (95% CI)")
    legend_outside(axes[0][-1])
    fig.suptitle("Single vs multi-vector cards, the aggregation and the retriever held fixed")
    return save(fig, path)


def card_content_plot(summary: pd.DataFrame, path=None):
    """Hit@1 against the `when_to_use` examples a card keeps, one line per field set, one panel per split:
    the mean over draws, the band from the lowest to the highest draw (`card_content.curve_summary`)."""
    if summary.empty:
        fig, ax = plt.subplots(figsize=(6, 1.5))
        ax.axis("off")
        ax.text(0.5, 0.5, "the card-content curve was not run (content_counts is empty)", ha="center")
        return save(fig, path)
    splits = list(dict.fromkeys(summary["split"]))
    fig, axes = plt.subplots(1, len(splits), figsize=(5.5 * len(splits), 4), sharey=True, squeeze=False)
    for ax, split in zip(axes[0], splits):
        rows = summary[summary["split"] == split]
        for i, (label, part) in enumerate(rows.groupby("fields", sort=False)):
            x = part["examples_kept_mean"].to_numpy(dtype=float)
            ax.plot(x, part["hit@1"], marker="o", color=f"C{i}", label=label)
            ax.fill_between(x, part["hit@1_low"], part["hit@1_high"], color=f"C{i}", alpha=0.2, lw=0)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("when_to_use examples per card (mean kept)")
        ax.set_title(f"{split} (n={int(rows['n'].iloc[0])})" if "n" in rows.columns else split)
        ax.set_ylim(0, 1)
    axes[0][0].set_ylabel("Hit@1 (mean over draws; band: lowest to highest draw)")
    legend_outside(axes[0][-1])
    fig.suptitle("How much card the router needs")
    return save(fig, path)
