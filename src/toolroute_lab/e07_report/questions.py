"""The mission's questions, each answered in one sentence from the run's tables (issue 39): the report opens
its study part with them.

One function per question reads the tables of the notebook that measures it and returns an `Answer`: the
sentence (the effect, its 95% CI, n and the test named), the evidence table it was read from, and what
was compared. A question whose notebook did not run, or ran without the part that measures it, says so
instead of answering. Which splits were tuned on is said where a split is named: dev, tune and calib are
tuning splits; test was looked at during development; the sealed set is measured once (`SEALED.md`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from toolroute.config import results_dir
from toolroute.evaluation.metrics import mcnemar_exact, wilson_interval
from toolroute_lab.run.declared import RAGAS_EVAL, STEP_LIMITS, TOOLCARD_ABLATION


QUESTIONS = (
    "Does one vector per `when_to_use` example (multi-vector) route better than one vector per card?",
    "Does embedding `when_not_to_use` with the card help retrieval?",
    "Does `when_not_to_use` in the bound descriptions help the LLM choose among look-alike tools?",
    "Does a cap of more tool steps complete more tasks than one step, and what does it cost?",
    "How good are the answers by RAGAS, and can its judge be trusted here?",
)
TRUSTED_AGREEMENT = 0.7  # a judge whose agreement with our labels cannot reach this (upper CI) is not read as evidence


@dataclass
class Answer:
    question: str
    sentence: str
    evidence: pd.DataFrame | None = None
    test: str = ""


def _ci(lo: float, hi: float) -> str:
    return f"[{lo:+.3f}, {hi:+.3f}]"


def _p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def single_vs_multi(tables: dict[str, pd.DataFrame]) -> Answer:
    """02's factorial (representation × aggregation × retriever): the default's cell (hybrid, top2) on test,
    and how many of the cells multi-vector wins or loses after Holm."""
    question = QUESTIONS[0]
    table = tables.get("representation")
    if table is None or table.empty:
        return Answer(question, "Not measured in this run (02's `representation.csv` is missing).")
    metric = "right_call" if "right_call" in set(table["metric"]) else "hit@1"
    test = table[(table["split"] == "test") & (table["metric"] == metric)]
    cell = test[(test["retriever"] == "hybrid") & (test["aggregation"] == "top2")]
    if cell.empty:
        return Answer(question, "Not measured in this run (no hybrid/top2 cell on test).", table)
    row = cell.iloc[0]
    won = int(((test["diff"] > 0) & test["holm_reject"]).sum())
    lost = int(((test["diff"] < 0) & test["holm_reject"]).sum())
    verdict = "No" if row["diff_hi"] <= 0 or (row["diff_lo"] < 0 < row["diff_hi"]) else "Yes"
    sentence = (f"**{verdict}.** In the default's cell (hybrid, top2) multi-vector minus single-vector "
                f"{metric} on test is {row['diff']:+.3f} {_ci(row['diff_lo'], row['diff_hi'])}, n = {int(row['n'])}, "
                f"Holm {_p(row['p_holm'])}; over all {len(test)} cells of the factorial on test multi-vector wins "
                f"{won} and loses {lost} after Holm (no difference can be told in the others).")
    columns = ["split", "retriever", "aggregation", "metric", "n", "single_value", "multi_value", "diff", "diff_lo",
               "diff_hi", "p_mcnemar", "p_holm"]
    evidence = table[table["metric"] == metric][[c for c in columns if c in table.columns]]
    return Answer(question, sentence, evidence.reset_index(drop=True),
                  "paired bootstrap 95% CI of the difference; exact McNemar; Holm within the factorial's cells per split")


def wnu_in_retrieval(tables: dict[str, pd.DataFrame], default_arm: str,
                     evidence_table: pd.DataFrame | None = None) -> Answer:
    """02's paired comparisons: the default hybrid with the when_not_to_use lines embedded, against the default."""
    question = QUESTIONS[1]
    paired = tables.get("paired_test")
    if paired is None or paired.empty:
        return Answer(question, "Not measured in this run (02's `paired_test.csv` is missing).")
    base = default_arm.removesuffix("+cascade")
    wnu_label = base.replace("/", "+wnu/", 1) if "/" in base else f"{base}+wnu"
    metric = "right_call" if "right_call" in set(paired["metric"]) else "hit@1"
    rows = paired[(paired["arm_label"] == wnu_label) & (paired["metric"] == metric)]
    if rows.empty:
        return Answer(question, f"Not measured in this run (no `{wnu_label}` row in 02's paired comparisons).")
    row = rows.iloc[0]
    holds = bool(row.get("holm_reject", False))
    verdict = ("**Yes.**" if holds and row["diff"] > 0 else "**It hurts.**" if holds else "**No.**")
    sentence = (f"{verdict} `{wnu_label}` minus the default (`{default_arm}`) on test {metric}: {row['diff']:+.3f} "
                f"{_ci(row['ci_low'], row['ci_high'])}, n = {int(row['n'])}, Holm {_p(row['p_holm'])} "
                f"(the seed keeps these lines out of the embedding; the default's cascade is on, the +wnu arm's off).")
    evidence = paired[paired["arm_label"].str.contains(r"\+wnu", regex=True)].reset_index(drop=True)
    negative = negative_evidence_sentence(evidence_table)
    return Answer(question, sentence + (f" {negative}" if negative else ""), evidence,
                  "paired bootstrap 95% CI; Holm over every arm and metric of 02's paired table; exact McNemar "
                  "for the negative-evidence study")


def negative_evidence_sentence(table: pd.DataFrame | None) -> str:
    """The study `toolroute_lab.studies.wnu_evidence` (outside the pipeline): the lines as evidence for the tool
    they point to, its setting chosen on dev + tune, read once on test."""
    if table is None or table.empty:
        return ""
    rows = table[(table["split"] == "test") & (table["metric"] == "right_call")]
    if rows.empty:
        return ""
    row = rows.iloc[0]
    return (f"As negative evidence instead (a query near A's line \"… → B\" moves B up and A down; τ = "
            f"{row['threshold']}, weight {row['weight']} chosen on dev + tune; `results/wnu_evidence.csv`), test right "
            f"call changes by {row['diff']:+.3f} {_ci(row['diff_lo'], row['diff_hi'])}, n = {int(row['n'])}, exact "
            f"McNemar {_p(row['p_mcnemar'])}: the top tool of {int(row['top1_changed'])} rows changed.")


def wnu_in_choice(tables: dict[str, pd.DataFrame]) -> Answer:
    """04's when_not_to_use choice part: the gold tools plus their look-alikes bound, on the confusion-pair rows."""
    question = QUESTIONS[2]
    table = tables.get("wnu_choice")
    if table is None or table.empty:
        return Answer(question, "Not measured in this run (04 ran without `wnu_binds`, or before it had them).")
    pick = table[(table["bind"] == "oracle_confusers") & (table["subset"] == "confusion-pair rows")]
    row = (pick if not pick.empty else table).iloc[0]
    n = int(row["n"])
    lo_with, hi_with = wilson_interval(round(row["with_wnu"] * n), n)
    holds = row["p_holm"] < 0.05
    verdict = ("**Yes.**" if holds and row["diff"] > 0 else "**It hurts.**" if holds else "**Not detectably.**")
    sentence = (f"{verdict} With `{row['bind']}` bound, on the {row['subset']} (n = {n}), the model's first call is a "
                f"gold tool {row['with_wnu']:.3f} [{lo_with:.3f}, {hi_with:.3f}] of the time with the lines and "
                f"{row['without_wnu']:.3f} without ({row['diff']:+.3f}; {int(row['with_only'])} rows right only with "
                f"them, {int(row['without_only'])} only without; exact McNemar, Holm {_p(row['p_holm'])}; power to detect "
                f"10 points {row['power_10_points']:.2f}).")
    return Answer(question, sentence, table, "exact McNemar on paired rows; Holm over the table; Wilson 95% CIs")


def step_limits(runs: pd.DataFrame | None, proposed: int = 3) -> Answer:
    """03's runs: completion of the agent as it runs (routed top-k) at cap 1 against the proposed cap, same tasks."""
    question = QUESTIONS[3]
    if runs is None or runs.empty:
        return Answer(question, "Not measured in this run (03's `runs.csv` is missing).")
    # a run without `arms` has no arm column: every run is then the agent as it runs
    routed = runs[runs["arm"].astype(str).str.startswith("routed")] if "arm" in runs.columns else runs
    model = routed["model"].iloc[0] if len(routed) else ""
    part = routed[routed["model"] == model]
    one, cap = part[part["cap"] == 1], part[part["cap"] == proposed]
    keys = [k for k in ("domain", "task_id") if k in part.columns]
    paired = one[keys + ["completed", "total_tokens"]].merge(cap[keys + ["completed", "total_tokens"]], on=keys,
                                                            suffixes=("_1", "_cap"))
    if paired.empty:
        return Answer(question, f"Not measured in this run (no routed runs at caps 1 and {proposed}).")
    a = paired["completed_1"].astype(str).str.lower().eq("true").astype(int).tolist()
    b = paired["completed_cap"].astype(str).str.lower().eq("true").astype(int).tolist()
    exact = mcnemar_exact(a, b)
    n = exact["n"]
    lo, hi = wilson_interval(sum(b), n)
    tokens = paired["total_tokens_cap"].mean() - paired["total_tokens_1"].mean()
    sentence = (f"With the router's top-k bound ({model}), {sum(b)}/{n} tasks = {sum(b) / n:.3f} [{lo:.3f}, {hi:.3f}] "
                f"complete at cap {proposed} against {sum(a)}/{n} at cap 1 ({exact['b_only']} complete only at cap "
                f"{proposed}, {exact['a_only']} only at cap 1; exact McNemar {_p(exact['p_mcnemar'])}), for "
                f"{tokens:+.0f} tokens per task on average.")
    summary = (part.groupby("cap").agg(runs=("completed", "size"),
                                       completed=("completed", lambda s: int(s.astype(str).str.lower().eq("true").sum())),
                                       tokens=("total_tokens", "mean"), seconds=("seconds", "mean"))
               .reset_index())
    return Answer(question, sentence, summary, "exact McNemar on the same tasks; Wilson 95% CI")


def ragas_judge(tables: dict[str, pd.DataFrame]) -> Answer:
    """04's judged metrics and the judge's agreement with our labels, side by side (faithfulness is never shown
    without it)."""
    question = QUESTIONS[4]
    agreement = tables.get("judge_agreement")
    by_kind = tables.get("by_kind")
    if agreement is None or agreement.empty or by_kind is None:
        return Answer(question, "Not measured in this run (04 ran without a judge or its agreement check).")
    rows = []
    for _, row in agreement.iterrows():
        judged = int(row["judged"])
        agree = round(float(row["agreement"]) * judged)
        lo, hi = wilson_interval(agree, judged) if judged else (float("nan"), float("nan"))
        metric = row["metric"]
        mean = by_kind[f"{metric}"] if metric in by_kind.columns else None
        scored = by_kind[f"n_{metric}"] if f"n_{metric}" in by_kind.columns else None
        value = (float((mean * scored).sum() / scored.sum()) if mean is not None and scored is not None and scored.sum()
                 else float("nan"))
        rows.append({"model": row["model"], "metric": metric, "mean score": value,
                     "rows scored": int(scored.sum()) if scored is not None else 0, "labelled rows": judged,
                     "agreement": row["agreement"], "agreement_lo": lo, "agreement_hi": hi, "kappa": row["kappa"],
                     "auc": row["auc"]})
    table = pd.DataFrame(rows)
    untrusted = table[table["agreement_hi"] < TRUSTED_AGREEMENT]["metric"].tolist()
    sentence = (f"**Only as far as its judge agrees with us:** on our labelled rows the judge agrees "
                + "; ".join(f"{r['metric']} {r['agreement']:.2f} [{r['agreement_lo']:.2f}, {r['agreement_hi']:.2f}] "
                            f"(n = {r['labelled rows']}, κ {r['kappa']:.2f})" for _, r in table.iterrows())
                + (f"; {', '.join(untrusted)} agree{'s' if len(untrusted) == 1 else ''} below "
                   f"{TRUSTED_AGREEMENT:.0%} even at the top of the CI, so those scores are not evidence in this run."
                   if untrusted else f"; every metric's CI reaches {TRUSTED_AGREEMENT:.0%} agreement (small n: wide CIs)."))
    return Answer(question, sentence, table, "Wilson 95% CI of the judge's agreement with hand labels at a score of 0.5")


def mission_answers(run, default_arm: str, proposed_cap: int = 3) -> list[Answer]:
    """Every question, in the mission's order, read from a `report.RunOutputs`."""
    ablation = run.tables.get(TOOLCARD_ABLATION.notebook) or {}
    ragas = run.tables.get(RAGAS_EVAL.notebook) or {}
    runs_path = run.run_dir / STEP_LIMITS.notebook / "runs.csv"
    runs = pd.read_csv(runs_path) if runs_path.is_file() else None
    study = results_dir() / "wnu_evidence.csv"
    negative = pd.read_csv(study) if study.is_file() else None
    askers = [lambda: single_vs_multi(ablation), lambda: wnu_in_retrieval(ablation, default_arm, negative),
              lambda: wnu_in_choice(ragas), lambda: step_limits(runs, proposed_cap), lambda: ragas_judge(ragas)]
    answers = []
    for ask, question in zip(askers, QUESTIONS):
        try:
            answers.append(ask())
        except KeyError as error:  # a table from an older run, without a column the answer reads
            answers.append(Answer(question, f"Not read from this run: its table has no column {error}."))
    return answers


def answer_items(answers: list[Answer]) -> list:
    """The answers as report items: a heading and sentence per question, then its evidence table."""
    items: list = []
    for answer in answers:
        items.append(f"### {answer.question}\n\n{answer.sentence}" + (f"\n\n*Test:* {answer.test}." if answer.test else ""))
        if answer.evidence is not None:
            items.append(answer.evidence)
    return items
