"""What each notebook found, in a few sentences written from its tables (the report's section text).

One function per experiment, keyed by notebook in `WRITERS`; each takes the report's `RunOutputs` and
returns sentences, every number in them formatted from a table of the run (or from the parameters the
manifest recorded), none typed in. A writer returns [] when its tables are not in the run. A sentence
says what the table shows and, where it matters, the size it rests on (n) and its interval.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from toolroute.evaluation.metrics import wilson_interval
from toolroute.experiments.arms import CEILING as CEILING_ARM
from toolroute.experiments.arms import arm_order
from toolroute.experiments.arms import describe as arm_text
from toolroute.experiments.breakdowns import with_holm
from toolroute.experiments.chain_outcomes import OUTCOMES, outcome_table
from toolroute.experiments.declared import (CARD_IMPROVEMENT, INGEST, RAGAS_EVAL, SCALE, STEP_LIMITS,
                                            TOOLCARD_ABLATION)
from toolroute.experiments.turn_outcomes import outcome_counts


def _pct(x: float) -> str:
    return f"{x:.0%}"


def _ci(lo: float, hi: float, digits: int = 3) -> str:
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def _wilson_text(successes: int, n: int) -> str:
    lo, hi = wilson_interval(successes, n)
    return f"{successes}/{n} ({_pct(successes / n)}, 95% CI {_pct(lo)}–{_pct(hi)})"


def notebook_parameters(run: Any, notebook: str) -> dict:
    """The parameters a notebook's manifest entry recorded ({} when none)."""
    return ((run.manifest.get("notebooks") or {}).get(notebook) or {}).get("parameters") or {}


def run_parameters(run_dir: Path, notebook: str) -> dict:
    """`notebook_parameters` read from a run folder's manifest.json ({} without one)."""
    manifest = Path(run_dir) / "manifest.json"
    if not manifest.is_file():
        return {}
    return ((json.loads(manifest.read_text()).get("notebooks") or {}).get(notebook) or {}).get("parameters") or {}


def _first_model(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the first model when a table holds several (the embedded model comes first)."""
    if "model" not in table.columns or table["model"].nunique() <= 1:
        return table
    return table[table["model"] == table["model"].iloc[0]]


DEFAULT_TOP_K = 5
"""The agent's router top-k when a run's manifest does not record it (the notebooks' default)."""


def agent_top_k(parameters: dict) -> int:
    """The router top-k the agent runs with, from the parameters a notebook's manifest entry recorded:
    the smallest of 03's `top_ks`, 04's `top_k`."""
    if parameters.get("top_ks"):
        return int(min(parameters["top_ks"]))
    return int(parameters.get("top_k") or DEFAULT_TOP_K)


def main_arm(table: pd.DataFrame, top_k: int = DEFAULT_TOP_K) -> str | None:
    """The arm the report's single numbers describe (None when the table has no arms): the agent as it
    runs, `routed@<top_k>`; else another routed arm (the smallest k); else the first arm in reading order."""
    if "arm" not in table.columns:
        return None
    arms = list(dict.fromkeys(table["arm"].astype(str)))
    if f"routed@{top_k}" in arms:
        return f"routed@{top_k}"
    return arm_order(arms)[0]


def main_rows(table: pd.DataFrame, top_k: int = DEFAULT_TOP_K) -> pd.DataFrame:
    """One model's rows of its main arm, or (a run without arms) of its smallest top-k."""
    arm = main_arm(table, top_k)
    if arm is not None:
        return table[table["arm"].astype(str) == arm]
    return table[table["top_k"] == table["top_k"].min()] if "top_k" in table.columns else table


def agent_rows(table: pd.DataFrame, top_k: int = DEFAULT_TOP_K) -> pd.DataFrame:
    """`main_rows` of the first model: the agent as the report's single numbers describe it."""
    return main_rows(_first_model(table), top_k)


def in_arm_order(table: pd.DataFrame) -> pd.DataFrame:
    """The table's rows with its arms in reading order (routed by k, oracle, all tools, the ceiling)."""
    order = arm_order(list(table["arm"].astype(str)))
    return table.sort_values("arm", key=lambda arms: arms.astype(str).map(order.index), kind="stable")


def other_arms(table: pd.DataFrame, top_k: int = DEFAULT_TOP_K) -> list[str]:
    """The first model's arms besides the main one, in reading order."""
    table = _first_model(table)
    if "arm" not in table.columns:
        return []
    main = main_arm(table, top_k)
    return [a for a in arm_order(list(table["arm"].astype(str))) if a != main]


# --- 01 ----------------------------------------------------------------------------------------------------------

def ingest(run: Any) -> list[str]:
    retrieval = run.table(INGEST.notebook, "retrieval")
    if retrieval is None or retrieval.empty:
        return []
    pooled = retrieval[retrieval["collection"] == "all"].sort_values("chunk_size")
    chosen = notebook_parameters(run, INGEST.notebook).get("chunk_size")
    best = pooled.loc[pooled["mrr"].idxmax()]
    out = [f"Over the {int(best['n'])} questions of both collections, chunk size {int(best['chunk_size'])} has the "
           f"best MRR ({best['mrr']:.3f}; Hit@1 {best['hit@1']:.3f}, Hit@5 {best['hit@5']:.3f}); the sizes tried give "
           + ", ".join(f"{int(r.chunk_size)}: MRR {r.mrr:.3f}" for r in pooled.itertuples()) + "."]
    size = chosen if chosen in set(pooled["chunk_size"]) else int(best["chunk_size"])
    parts = retrieval[(retrieval["chunk_size"] == size) & (retrieval["collection"] != "all")]
    spread = pooled["hit@1"].max() - pooled["hit@1"].min()
    if len(parts) > 1:
        gap = parts["hit@1"].max() - parts["hit@1"].min()
        lead = "The collections differ more than the sizes do" if gap > spread else "The collections differ less than the sizes do"
        out.append(f"{lead}: at chunk size {size}, "
                   + " and ".join(f"{r['collection']} Hit@1 {r['hit@1']:.3f} (n={int(r['n'])})" for _, r in parts.iterrows())
                   + f"; with n={int(parts['n'].min())}, one question moves a rate by {1 / parts['n'].min():.3f}.")
    out.append(f"Across chunk sizes the pooled Hit@1 varies by {spread:.3f} ({round(spread * best['n']):.0f} of "
               f"{int(best['n'])} questions) and no CI is computed, so the choice of size is weakly supported.")
    ing = run.table(INGEST.notebook, "ingest")
    if ing is not None and {"first", "second"} <= set(ing["ingest"]):
        first, second = ing[ing["ingest"] == "first"], ing[ing["ingest"] == "second"]
        out.append(f"Ingesting the unchanged documents again re-embedded {int(second['added'].sum())} of "
                   f"{int(second['chunks'].sum())} chunks and took {second['seconds'].sum():.2f} s, against "
                   f"{first['seconds'].sum():.1f} s the first time.")
    return out


# --- 02 ----------------------------------------------------------------------------------------------------------

def ablation(run: Any, default_arm: str) -> list[str]:
    test = run.table(TOOLCARD_ABLATION.notebook, "ablation_test")
    if test is None or default_arm not in set(test["arm_label"]):
        return []
    d = test.set_index("arm_label").loc[default_arm]
    paired = run.table(TOOLCARD_ABLATION.notebook, "paired_test")
    n = f"'s {int(paired['n'].iloc[0])} call queries" if paired is not None and len(paired) else ""
    out = [f"The default arm {default_arm} reaches, on test{n}, Hit@1 {d['hit@1']:.3f} {_ci(d['hit@1_lo'], d['hit@1_hi'])}, "
           f"Recall@5 {d['recall@5']:.3f} {_ci(d['recall@5_lo'], d['recall@5_hi'])} and MRR {d['mrr']:.3f} "
           f"{_ci(d['mrr_lo'], d['mrr_hi'])} (95% bootstrap CIs)" + _kinds_clause(run, default_arm) + "."]
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
            f"{r['split']} {r['hit@1']:.3f} {_ci(r['hit@1_lo'], r['hit@1_hi'])}" for _, r in mine.iterrows())
            + " (cards and settings were tuned on dev).")
    elif dev is not None and default_arm in set(dev["arm_label"]):
        dv = float(dev.set_index("arm_label").loc[default_arm, "hit@1"])
        out.append(f"On dev, where cards and settings were tuned, the same arm reaches Hit@1 {dv:.3f}, "
                   f"{dv - d['hit@1']:+.3f} against test.")
    out.append(f"The no-call rule (fitted on the calib split) answers {d['no_call_accuracy']:.3f} of the no-call queries "
               f"{_ci(d['no_call_accuracy_lo'], d['no_call_accuracy_hi'])} and refuses {d['false_no_call_rate']:.3f} of "
               f"real calls {_ci(d['false_no_call_rate_lo'], d['false_no_call_rate_hi'])}" + _auc_clause(run, default_arm)
               + ".")
    if paired is not None and len(paired) and "p_value" in paired.columns:
        paired = with_holm(paired)
        raw = paired[paired["p_value"] < 0.05]
        kept = paired[paired["holm_reject"].astype(bool)]
        raw_better = raw[raw["diff"] > 0]
        named = "; ".join(f"{r['arm_label']} {r['metric']} {r['diff']:+.3f} {_ci(r['ci_low'], r['ci_high'])}"
                          for _, r in raw_better.iterrows())
        out.append(f"Of the {len(paired)} paired comparisons with the default ({paired['arm_label'].nunique()} arms × "
                   f"{paired['metric'].nunique()} metrics), {len(raw)} have p < 0.05 uncorrected, "
                   f"{len(raw_better)} of them in favour of the other arm" + (f" ({named})" if named else "")
                   + f"; after Holm's correction {len(kept)} remain, {int((kept['diff'] > 0).sum())} in favour of "
                   "the other arm.")
    writer = _writer_sentence(run, default_arm)
    if writer:
        out.append(writer)
    return out


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
            f"{_ci(r['auc_lo'], r['auc_hi'])}")


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
           f"Hit@1 {b['hit@1']:.3f}{a}, a gap of {b['hit@1_gap']:+.3f} {_ci(b['hit@1_gap_lo'], b['hit@1_gap_hi'])}")
    if "hit@1_gap_same_kinds" in b and pd.notna(b["hit@1_gap_same_kinds"]) and len(base):
        missing = [k for k in str(base.iloc[0]["kinds"]).split(",") if k not in str(b["same_kinds"]).split(",")]
        if missing:
            out += (f"; writer {b['writer']} wrote no {', '.join(k.replace('_', '-') for k in missing)} rows, and over the "
                    f"kinds both wrote ({str(b['same_kinds']).replace('_', '-').replace(',', ', ')}) the gap is "
                    f"{b['hit@1_gap_same_kinds']:+.3f} {_ci(b['hit@1_gap_same_kinds_lo'], b['hit@1_gap_same_kinds_hi'])}")
    return out + "."


# --- 03 ----------------------------------------------------------------------------------------------------------

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
                         f"{_wilson_text(int(r['completed']), int(r['runs']))} of the tasks, at "
                         f"{r['total_tokens']:,.0f} tokens and {r['seconds']:.1f} s per task")
    arm = main_arm(_first_model(by_cap), top_k)
    how = f"with {arm_text(arm)}" if arm else f"(top-{int(main_rows(by_cap)['top_k'].iloc[0])})"
    who = f" (model {models[0]})" if len(models) == 1 and models[0] is not None else ""
    out = [f"At cap {proposed_cap} the agent {how}{who} completed " + "; ".join(parts) + "."] if parts else []
    first_model = _first_model(by_cap)
    first = main_rows(first_model, top_k).sort_values("cap")
    best, worst = first.loc[first["completion"].idxmax()], first.loc[first["completion"].idxmin()]
    out.append(f"Across caps {', '.join(str(int(c)) for c in first['cap'])}, completion ranges from "
               f"{_pct(worst['completion'])} (cap {int(worst['cap'])}) to {_pct(best['completion'])} "
               f"(cap {int(best['cap'])}), a difference of {int(best['completed'] - worst['completed'])} of "
               f"{int(best['runs'])} tasks.")
    others = []
    for other in other_arms(by_cap, top_k):
        rows = first_model[first_model["arm"].astype(str) == other].sort_values("cap")
        at = rows[rows["cap"] == proposed_cap]
        if other == CEILING_ARM and rows["completed"].nunique() == 1:  # the gold calls are replayed whatever the cap
            others.append(f"{arm_text(other)}: {_wilson_text(int(rows['completed'].iloc[0]), int(rows['runs'].iloc[0]))} "
                          "at every cap (the cap does not apply)")
            continue
        ci = ""
        if len(at):
            lo, hi = wilson_interval(int(at.iloc[0]["completed"]), int(at.iloc[0]["runs"]))
            ci = f" (95% CI at cap {proposed_cap}: {_pct(lo)}–{_pct(hi)})"
        others.append(f"{arm_text(other)}: " + ", ".join(
            f"cap {int(r.cap)} {int(r.completed)}/{int(r.runs)}" for r in rows.itertuples()) + ci)
    if others:
        out.append("Completed with " + "; with ".join(others) + ".")
    by_length = run.table(STEP_LIMITS.notebook, "by_length")
    if by_length is not None:
        length = _first_model(by_length)
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
        cuts = _first_model(cuts)
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
    table = outcome_table(_first_model(pd.read_csv(path)), cap=cap, min_length=2)
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


# --- 04 ----------------------------------------------------------------------------------------------------------

def rag_routing(run: Any, top_k: int = DEFAULT_TOP_K) -> tuple[int, int, int] | None:
    """(RAG questions, those whose gold RAG tool the router put in the top k, those whose gold tool the
    model called), from 04's runs.csv; None when it is not in the run."""
    path = run.run_dir / RAGAS_EVAL.notebook / "runs.csv"
    if not path.is_file():
        return None
    runs = agent_rows(pd.read_csv(path), top_k)
    rag = runs[runs["kind"] == "rag"]
    routed = called = 0
    for row in rag.itertuples():
        gold = set(json.loads(row.gold_tools))
        routed += bool(gold & set(json.loads(row.routed)))
        called += bool(gold & set(json.loads(row.called_tools)))
    return len(rag), routed, called


TURN_OUTCOME_WORDS = {"not routed": "a gold tool not routed (outside the top k)",
                      "not all called": "not all gold tools called",
                      "call did not answer": "a call without an answer (all called)",
                      "answer": "a fact or check missed (every call answered)",
                      "blocked": "refused by the input guardrail", "error": "an error"}


def _turn_outcomes_clause(run: Any, top_k: int) -> str:
    """The failed consultation turns per lever that lost them ("; the N failing turns by the lever …",
    `turn_outcomes`, from 04's runs.csv and scores.csv of the agent as it runs); "" when the run lacks them."""
    path = run.run_dir / RAGAS_EVAL.notebook / "runs.csv"
    scores = run.table(RAGAS_EVAL.notebook, "scores")
    if not path.is_file() or scores is None or "passed" not in scores.columns:
        return ""
    counts = outcome_counts(agent_rows(pd.read_csv(path), top_k), agent_rows(scores, top_k))
    failed = {o: int(counts[o]) for o in TURN_OUTCOME_WORDS if o in counts.index and counts[o]}  # the agent's order
    if not failed:
        return ""
    parts, n = [f"{TURN_OUTCOME_WORDS[o]} {k}" for o, k in failed.items()], sum(failed.values())
    return (f"; the {n} failing turns by the lever that lost them: " if n > 1 else
            "; the failing turn by the lever that lost it: ") + ", ".join(parts)


def best_consultation(by_scenario: pd.DataFrame) -> pd.Series:
    """The consultation with the most turns passed, then the highest tool-call accuracy, then facts: on
    tool-call accuracy alone, ties (common: it moves in quarters) fell to the first name in order."""
    keys = [k for k in ("pass_rate", "tool_call_accuracy", "fact_presence") if k in by_scenario.columns]
    ranked = by_scenario.sort_values(keys, ascending=False, kind="stable", na_position="last")
    return ranked.iloc[0]


def zero_consultations(by_scenario: pd.DataFrame) -> list[str]:
    """Consultations whose tool-call accuracy and fact presence are both 0."""
    zero = by_scenario[(by_scenario["tool_call_accuracy"] == 0) & (by_scenario["fact_presence"] == 0)]
    return list(zero["conversation"])


def ragas(run: Any) -> list[str]:
    by_kind = run.table(RAGAS_EVAL.notebook, "by_kind")
    if by_kind is None or by_kind.empty:
        return []
    top_k = agent_top_k(notebook_parameters(run, RAGAS_EVAL.notebook))
    kinds = agent_rows(by_kind, top_k).set_index("kind")
    out = []
    if "scenario" in kinds.index:
        s = kinds.loc["scenario"]
        passing = (f"; {_wilson_text(int(s['passed']), int(s['n_pass_rate']))} of the turns pass every check "
                   f"(tools, facts, no forbidden phrase, no known fact asked again)"
                   if "n_pass_rate" in kinds.columns and pd.notna(s["n_pass_rate"]) and s["n_pass_rate"] > 0 else "")
        out.append(f"On the {int(s['turns'])} scenario turns the agent names the right tools with F1 "
                   f"{s['tool_name_f1']:.3f}, but ToolCallAccuracy (names and arguments) is {s['tool_call_accuracy']:.3f} "
                   f"and {s['fact_presence']:.3f} of the facts an answer must state reach it{passing}"
                   f"{_turn_outcomes_clause(run, top_k)}.")
    by_scenario = run.table(RAGAS_EVAL.notebook, "by_scenario")
    if by_scenario is not None and len(by_scenario):
        sc = agent_rows(by_scenario, top_k)
        best = best_consultation(sc)
        zero = zero_consultations(sc)
        passed = (f", {int(best['passed'])} of {int(best['turns'])} turns passed"
                  if "passed" in best.index and pd.notna(best["passed"]) else "")
        out.append(f"Per consultation the best is {best['conversation']} (tool-call accuracy "
                   f"{best['tool_call_accuracy']:.2f}, facts {best['fact_presence']:.2f}{passed}); {len(zero)} of {len(sc)} "
                   f"consultations score 0 on both" + (f" ({', '.join(zero)})." if zero else "."))
    rag = rag_routing(run, top_k)
    if rag is not None and rag[0]:
        n, routed, called = rag
        out.append(f"Of the {n} RAG questions, the router put the gold RAG tool in the top k for {routed} and the "
                   f"model called it for {called}; the others were answered with structured product tools or none.")
    if "query" in kinds.index:
        q = kinds.loc["query"]
        arm = main_arm(_first_model(by_kind), top_k)
        out.append(f"On {int(q['turns'])} test queries the end-to-end tool-name F1 is {q['tool_name_f1']:.3f}"
                   + (f" with {arm_text(arm)}." if arm else "."))
    out += _query_arms(run.table(RAGAS_EVAL.notebook, "by_arm"))
    failures = run.table(RAGAS_EVAL.notebook, "judge_failures")
    if failures is not None and len(failures):
        f = failures.set_index("metric")
        out.append(f"The judge made {int(f['attempted'].sum())} judgements ({int(f['failed'].sum())} failed to parse)"
                   + (f"; faithfulness was judged on {int(f.loc['faithfulness', 'ok'])} rows"
                      if "faithfulness" in f.index else "") + ".")
    return out


def _query_arms(by_arm: pd.DataFrame | None) -> list[str]:
    """04's test queries under every arm (router error and model error apart): the share completed (every
    gold tool called, none on a no-call query, no error; a turn over the context is not sent and counts as
    failed) with its Wilson CI, the tool-name F1 and the prompt tokens. The ceiling is left out: a test
    query has no facts to state, so with its gold calls replayed it is complete by construction."""
    if by_arm is None or "arm" not in by_arm.columns or "kind" not in by_arm.columns:
        return []
    rows = _first_model(by_arm)
    rows = rows[(rows["kind"] == "query") & (rows["arm"].astype(str) != CEILING_ARM)]
    if rows["arm"].nunique() < 2:
        return []
    parts = []
    for r in in_arm_order(rows).itertuples():
        over = int(getattr(r, "over_context", 0) or 0)
        if over and over >= int(r.runs):
            parts.append(f"{arm_text(str(r.arm))}: none sent, all {over} prompts over the model's context")
            continue
        lo, hi = wilson_interval(int(r.completed), int(r.runs))
        text = f"{arm_text(str(r.arm))} {int(r.completed)}/{int(r.runs)} [{lo:.2f}, {hi:.2f}], F1 {r.tool_name_f1:.3f}"
        if over:
            text += f", {over} not sent (over the context)"
        if pd.notna(getattr(r, "prompt_tokens", None)) and r.prompt_tokens > 0:
            text += f", {r.prompt_tokens:,.0f} prompt tokens"
        parts.append(text)
    return ["Test queries completed (every gold tool called, none on a no-call query, no error), by arm: "
            + "; ".join(parts) + "."]


# --- 05 ----------------------------------------------------------------------------------------------------------

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
                        f"{_ci(b['hit@1_diff_lo'], b['hit@1_diff_hi'])}, a distractor on top for "
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


# --- 06 ----------------------------------------------------------------------------------------------------------

def _diff_text(row: pd.Series) -> str:
    return f"{row['hit@1_diff']:+.3f} {_ci(row['hit@1_diff_lo'], row['hit@1_diff_hi'])}"


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


def writers(default_arm: str, proposed_cap: int) -> dict[str, Callable[[Any], list[str]]]:
    """The findings writer of each notebook, with the report's parameters bound."""
    return {INGEST.notebook: ingest, TOOLCARD_ABLATION.notebook: lambda run: ablation(run, default_arm),
            STEP_LIMITS.notebook: lambda run: step_limits(run, proposed_cap), RAGAS_EVAL.notebook: ragas,
            SCALE.notebook: scale, CARD_IMPROVEMENT.notebook: card_improvement}
