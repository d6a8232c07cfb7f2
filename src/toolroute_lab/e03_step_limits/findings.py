"""The findings of notebook 03 (step limits) in a few sentences, written from its tables for the report."""

from __future__ import annotations

from typing import Any

import pandas as pd

from toolroute.evaluation.metrics import wilson_interval
from toolroute_lab.shared.arms import CEILING as CEILING_ARM
from toolroute_lab.shared.arms import arm_order
from toolroute_lab.shared.arms import describe as arm_text
from toolroute_lab.e03_step_limits.chain_outcomes import OUTCOMES, outcome_table
from toolroute_lab.e03_step_limits import STEP_LIMITS
from toolroute_lab.shared.run_tables import agent_top_k, first_model, main_arm, main_rows, notebook_parameters, other_arms, pct, wilson_text


def step_limits(run: Any, proposed_cap: int) -> list[str]:
    by_cap = run.table(STEP_LIMITS.notebook, "by_cap")
    if by_cap is None or by_cap.empty:
        return []
    top_k = agent_top_k(notebook_parameters(run, STEP_LIMITS.notebook))
    models = list(by_cap["model"].unique()) if "model" in by_cap.columns else [None]
    parts = []
    for model in models:
        part = main_rows(by_cap if model is None else by_cap[by_cap["model"] == model], top_k)
        at = part[part["cap"] == proposed_cap]
        if len(at):
            r = at.iloc[0]
            parts.append((f"model {model}: " if len(models) > 1 else "") +
                         f"{wilson_text(int(r['completed']), int(r['runs']))} of the tasks, at "
                         f"{r['total_tokens']:,.0f} tokens and {r['seconds']:.1f} s per task")
    arm = main_arm(first_model(by_cap), top_k)
    how = f"with {arm_text(arm)}" if arm else f"(top-{int(main_rows(by_cap)['top_k'].iloc[0])})"
    who = f" (model {models[0]})" if len(models) == 1 and models[0] is not None else ""
    out = [f"At cap {proposed_cap} the agent {how}{who} completed " + "; ".join(parts) + "."] if parts else []
    first_rows = first_model(by_cap)
    first = main_rows(first_rows, top_k).sort_values("cap")
    best, worst = first.loc[first["completion"].idxmax()], first.loc[first["completion"].idxmin()]
    out.append(f"Across caps {', '.join(str(int(c)) for c in first['cap'])}, completion ranges from "
               f"{pct(worst['completion'])} (cap {int(worst['cap'])}) to {pct(best['completion'])} "
               f"(cap {int(best['cap'])}), a difference of {int(best['completed'] - worst['completed'])} of "
               f"{int(best['runs'])} tasks.")
    others = []
    for other in other_arms(by_cap, top_k):
        rows = first_rows[first_rows["arm"].astype(str) == other].sort_values("cap")
        at = rows[rows["cap"] == proposed_cap]
        if other == CEILING_ARM and rows["completed"].nunique() == 1:  # the gold calls are replayed whatever the cap
            others.append(f"{arm_text(other)}: {wilson_text(int(rows['completed'].iloc[0]), int(rows['runs'].iloc[0]))} "
                          "at every cap (the cap does not apply)")
            continue
        ci = ""
        if len(at):
            lo, hi = wilson_interval(int(at.iloc[0]["completed"]), int(at.iloc[0]["runs"]))
            ci = f" (95% CI at cap {proposed_cap}: {pct(lo)}–{pct(hi)})"
        others.append(f"{arm_text(other)}: " + ", ".join(
            f"cap {int(r.cap)} {int(r.completed)}/{int(r.runs)}" for r in rows.itertuples()) + ci)
    if others:
        out.append("Completed with " + "; with ".join(others) + ".")
    by_length = run.table(STEP_LIMITS.notebook, "by_length")
    if by_length is not None:
        length = first_model(by_length)
        length = length[length["cap"] == proposed_cap]
        arms = [main_arm(length, top_k), *other_arms(length, top_k)] if "arm" in length.columns else [None]
        texts = []
        for a in arms:
            rows = main_rows(length, top_k) if a is None else length[length["arm"].astype(str) == a]
            if len(rows):
                texts.append(("" if a is None else f"{arm_text(a)}: ") + ", ".join(
                    f"{_tools(int(r.chain_length))} {int(r.completed)}/{int(r.runs)}" for r in rows.itertuples()))
        if texts:
            out.append(f"By the number of tools a task needs, at cap {proposed_cap}: " + "; ".join(texts) + ".")
    why = _chain_outcomes_sentence(run, proposed_cap)
    if why:
        out.append(why)
    cuts = run.table(STEP_LIMITS.notebook, "cut_chains")
    if cuts is not None:
        cuts = first_model(cuts)
        if len(cuts) == 0:
            out.append("No run failed at a cap that a higher cap completed, so the cap is not what limits this agent.")
        elif "arm" in cuts.columns:
            counts = cuts["arm"].astype(str).value_counts()
            out.append(f"{len(cuts)} runs failed at a cap although a higher cap completed the same task: "
                       + ", ".join(f"{int(counts[a])} with {arm_text(a)}" for a in arm_order(list(counts.index))) + ".")
        else:
            out.append(f"{len(cuts)} runs failed at a cap although a higher cap completed the same task.")
    return out


def _chain_outcomes_sentence(run: Any, cap: int) -> str:
    """Why the two- and three-tool tasks failed at `cap`, per arm (`chain_outcomes`, from 03's runs.csv of
    the first model); "" when the run has no runs.csv or no such task."""
    path = run.run_dir / STEP_LIMITS.notebook / "runs.csv"
    if not path.is_file():
        return ""
    table = outcome_table(first_model(pd.read_csv(path)), cap=cap, min_length=2)
    if table.empty:
        return ""
    parts = []
    for _, row in table.iterrows():
        failed = [(name, int(row[name])) for name in OUTCOMES[1:] if name in row and row[name] > 0]
        parts.append(f"{arm_text(str(row['arm']))} {int(row.get('completed', 0))} of {int(row['runs'])} completed"
                     + (" (" + ", ".join(f"{n} {name}" for name, n in failed) + ")" if failed else ""))
    return (f"How the two- and three-tool tasks ended at cap {cap} (stopped early: the model answered before "
            "calling every gold tool; facts missing: every gold tool called, the answer wrong): " + "; ".join(parts) + ".")


def _tools(n: int) -> str:
    return "no tool" if n == 0 else f"{n} tool" + ("s" if n > 1 else "")
