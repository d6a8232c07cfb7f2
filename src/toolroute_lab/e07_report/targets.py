"""The numbers the project set out to reach, in one place, each read from the table that measures it.

Every `Target` names the CSV and the column its value comes from and the row it takes (column = value
pairs; `{default_arm}` stands for the router arm the report presents). The CSV is in the run folder
(`02_toolcard_ablation/ablation_test.csv`), or in the repository when the run does not write it
(`results/guard_eval.csv`, written by `python -m toolroute_lab.studies.guard_eval`). The report leads
with `verdicts(...)`: per target the measured value, its 95% CI (the table's own bootstrap CI when it
has `<column>_lo` / `<column>_hi`, else a Wilson interval when the table gives the count and n), and
met / missed / not measured. A target whose table or column the run does not have is "not measured",
never dropped: the verdict table always lists every target. A table with agent arms (03, 04) is read on
the agent as it runs, its `routed@<top-k>` arm; the oracle and ceiling arms are in their sections.

The targets come from the open issues (their number is in `issue`); change a target here and nowhere else.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from toolroute.config import ROOT
from toolroute.evaluation.metrics import wilson_interval
from toolroute_lab.shared.run_tables import agent_top_k, main_arm, run_parameters

AT_LEAST, AT_MOST = ">=", "<="
DEFAULT_ARM = "{default_arm}"


@dataclass(frozen=True)
class Target:
    name: str
    """What is measured, in the report's words."""
    table: str
    """The CSV: a path in the run folder, or in the repository when `in_run` is False."""
    column: str
    """The column holding the value."""
    rows: tuple[tuple[str, object], ...]
    """The row: (column, value) pairs it must match (`DEFAULT_ARM` is replaced by the report's arm)."""
    goal: str
    """`AT_LEAST` or `AT_MOST` the threshold."""
    threshold: float
    issue: int
    """The issue that set it."""
    count: str | None = None
    """With `n`: the column of successes, for a Wilson CI when the table has no CI of its own."""
    n: str | None = None
    unit: str = ""
    """"ms" for times; empty for rates and scores (in [0, 1])."""
    in_run: bool = True

    def path(self, run_dir: Path, root: Path = ROOT) -> Path:
        return (Path(run_dir) if self.in_run else Path(root)) / self.table

    def goal_text(self) -> str:
        sign = "≥" if self.goal == AT_LEAST else "≤"
        return f"{sign} {_number(self.threshold, self.unit)}"

    def met(self, value: float) -> bool:
        return value >= self.threshold if self.goal == AT_LEAST else value <= self.threshold


_ROUTER = "02_toolcard_ablation/ablation_test.csv"
_ARM = (("arm_label", DEFAULT_ARM),)
_SCALE_54 = "05_scale/scale.csv"

TARGETS: tuple[Target, ...] = (
    Target("router right call (right tool called, or no-call row refused), test", _ROUTER, "right_call", _ARM,
           AT_LEAST, 0.92, issue=39),
    Target("router Hit@1, test", _ROUTER, "hit@1", _ARM, AT_LEAST, 0.92, issue=23),
    Target("router Recall@5, test", _ROUTER, "recall@5", _ARM, AT_LEAST, 0.99, issue=23),
    Target("router MRR, test", _ROUTER, "mrr", _ARM, AT_LEAST, 0.95, issue=23),
    Target("no-call accuracy, test", _ROUTER, "no_call_accuracy", _ARM, AT_LEAST, 0.95, issue=23),
    Target("false no-call rate (real calls refused), test", _ROUTER, "false_no_call_rate", _ARM, AT_MOST, 0.03,
           issue=23),
    Target("hybrid route p50, 54 tools, one query at a time", _SCALE_54, "latency_p50_ms",
           (("size", 54), ("arm", "hybrid")), AT_MOST, 10.0, issue=23, unit="ms"),
    Target("hybrid route p95, 54 tools, one query at a time", _SCALE_54, "latency_p95_ms",
           (("size", 54), ("arm", "hybrid")), AT_MOST, 20.0, issue=23, unit="ms"),
    Target("injections blocked, new held-out set (L1+L2+L3)", "results/guard_eval.csv", "rate",
           (("set", "heldout_new"), ("kind", "injection"), ("layer", "L1+L2+L3")), AT_LEAST, 0.90, issue=20,
           count="blocked", n="n", in_run=False),
    Target("false blocks, in-domain test queries (L1+L2+L3)", "results/guard_eval.csv", "rate",
           (("set", "test_queries"), ("kind", "in_domain"), ("layer", "L1+L2+L3")), AT_MOST, 0.02, issue=20,
           count="blocked", n="n", in_run=False),
    Target("scenario pass rate (every tool, fact and rule of a turn)", "04_ragas_eval/by_kind.csv", "pass_rate",
           (("kind", "scenario"),), AT_LEAST, 0.30, issue=24, count="passed", n="n_pass_rate"),
    Target("2-tool chain completion at cap 3", "03_step_limits/by_length.csv", "completion",
           (("chain_length", 2), ("cap", 3)), AT_LEAST, 0.30, issue=24, count="completed", n="runs"),
)


def _number(value: float, unit: str = "") -> str:
    return f"{value:.1f} ms" if unit == "ms" else f"{value:.3f}"


def _matches(table: pd.DataFrame, rows: tuple[tuple[str, object], ...], default_arm: str) -> pd.DataFrame | None:
    """The rows of `table` matching every pair (None when a column is missing)."""
    mask = pd.Series(True, index=table.index)
    for column, value in rows:
        if column not in table.columns:
            return None
        value = default_arm if value == DEFAULT_ARM else value
        mask &= table[column].astype(str) == str(value)
    return table[mask]


def _label(match: pd.DataFrame, row: pd.Series) -> str:
    """For a target that matches several rows (one per model, say): what tells this one apart."""
    differing = [c for c in match.columns if match[c].nunique(dropna=False) > 1 and c in ("model", "top_k", "domain")]
    return ", ".join(f"{c} {row[c]}" for c in differing)


def source_text(target: Target, default_arm: str, agent_arm: str | None = None) -> str:
    where = [f"{c} = {default_arm if v == DEFAULT_ARM else v}" for c, v in target.rows]
    return f"{target.table}: {target.column} ({', '.join(where + ([f'arm = {agent_arm}'] if agent_arm else []))})"


def _ci(target: Target, table: pd.DataFrame, row: pd.Series) -> tuple[float, float, str]:
    lo, hi = f"{target.column}_lo", f"{target.column}_hi"
    if lo in table.columns and hi in table.columns and not (pd.isna(row[lo]) or pd.isna(row[hi])):
        return float(row[lo]), float(row[hi]), "bootstrap"
    if target.count and target.n and {target.count, target.n} <= set(table.columns):
        low, high = wilson_interval(int(row[target.count]), int(row[target.n]))
        return low, high, "Wilson"
    return math.nan, math.nan, ""


def _bound(value: float, threshold: float, unit: str) -> str:
    """A CI bound printed with one more digit when the usual digits would round it onto the threshold."""
    text = _number(value, unit)
    return text if text != _number(threshold, unit) else (f"{value:.2f} ms" if unit == "ms" else f"{value:.4f}")


def _timing_note(row: pd.Series) -> str:
    """A latency has no CI; say how many passes its median is of and how far the passes' p50s spread."""
    passes = row.get("latency_passes")
    low, high = row.get("latency_p50_min_ms"), row.get("latency_p50_max_ms")
    if passes is None or pd.isna(passes) or int(passes) < 2 or low is None or pd.isna(low) or pd.isna(high):
        return "one measurement, no CI"
    return f"median of {int(passes)} passes (their p50s {low:.1f}–{high:.1f} ms), no CI"


def _note(target: Target, value: float, lo: float, hi: float, row: pd.Series) -> str:
    if math.isnan(lo):
        return _timing_note(row) if target.unit == "ms" else ""
    goal = _number(target.threshold, target.unit)
    if target.met(value) and target.goal == AT_MOST and hi > target.threshold:
        return f"met on the point estimate only: the CI's upper bound {_bound(hi, target.threshold, target.unit)} exceeds the {goal} budget"
    if target.met(value) and target.goal == AT_LEAST and lo < target.threshold:
        return f"met on the point estimate only: the CI's lower bound {_bound(lo, target.threshold, target.unit)} is below the {goal} target"
    if not target.met(value) and lo <= target.threshold <= hi:
        return "missed on the point estimate; the CI reaches the goal"
    return ""


def verdicts(run_dir: str | Path, default_arm: str, targets: tuple[Target, ...] = TARGETS,
             root: Path = ROOT) -> pd.DataFrame:
    """One row per target (per matching row when a table has one per model): the goal, the measured value
    and its 95% CI, met / missed / not measured, a note when the CI crosses the goal, and where the value
    was read."""
    out = []
    for target in targets:
        base = {"target": target.name, "goal": target.goal_text(), "issue": target.issue,
                "source": source_text(target, default_arm)}
        path = target.path(Path(run_dir), root)
        table = pd.read_csv(path) if path.is_file() else None
        match = None if table is None or target.column not in table.columns else _matches(table, target.rows, default_arm)
        if match is None or match.empty:
            why = ("not in this run" if table is None else
                   f"no {target.column} column: this run does not measure it" if target.column not in table.columns
                   else "no matching row")
            out.append({**base, "value": math.nan, "ci_low": math.nan, "ci_high": math.nan, "ci": "", "n": math.nan,
                        "verdict": "not measured", "note": f"{target.table}: {why}"})
            continue
        if "arm" in match.columns and match["arm"].nunique() > 1:  # a target is about the agent as it runs
            arm = main_arm(match, agent_top_k(run_parameters(Path(run_dir), target.table.split("/")[0])))
            match = match[match["arm"].astype(str) == arm]
            base["source"] = source_text(target, default_arm, arm)
        for _, row in match.iterrows():
            value = float(row[target.column])
            lo, hi, method = _ci(target, table, row)
            label = _label(match, row)
            out.append({**base, "target": target.name + (f" ({label})" if label else ""), "value": value,
                        "ci_low": lo, "ci_high": hi, "ci": method,
                        "n": int(row[target.n]) if target.n and target.n in row else math.nan,
                        "verdict": "met" if target.met(value) else "missed", "note": _note(target, value, lo, hi, row)})
    return pd.DataFrame(out, columns=["target", "goal", "value", "ci_low", "ci_high", "ci", "n", "verdict", "note",
                                      "issue", "source"])


def verdict_display(table: pd.DataFrame, targets: tuple[Target, ...] = TARGETS) -> pd.DataFrame:
    """The verdict table as the report prints it: value and CI formatted in the target's unit."""
    units = {t.name: t.unit for t in targets}

    def unit(name: str) -> str:
        return next((u for n, u in units.items() if name.startswith(n)), "")

    rows = []
    for _, r in table.iterrows():
        u = unit(r["target"])
        measured = "–" if pd.isna(r["value"]) else _number(r["value"], u)
        ci = "–" if pd.isna(r["ci_low"]) else f"[{_number(r['ci_low'], u)}, {_number(r['ci_high'], u)}] ({r['ci']})"
        rows.append({"target": r["target"], "goal": r["goal"], "measured": measured, "95% CI": ci,
                     "n": "" if pd.isna(r["n"]) else str(int(r["n"])), "verdict": r["verdict"], "note": r["note"],
                     "issue": f"#{r['issue']}", "read from": r["source"]})
    return pd.DataFrame(rows)
