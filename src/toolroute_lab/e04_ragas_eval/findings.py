"""The findings of notebook 04 (RAGAS evaluation) in a few sentences, written from its tables for the report."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from toolroute.evaluation.metrics import wilson_interval
from toolroute_lab.shared.arms import CEILING as CEILING_ARM
from toolroute_lab.shared.arms import describe as arm_text
from toolroute_lab.e04_ragas_eval import RAGAS_EVAL
from toolroute_lab.e04_ragas_eval.turn_outcomes import outcome_counts
from toolroute_lab.shared.run_tables import DEFAULT_TOP_K, agent_rows, agent_top_k, first_model, in_arm_order, main_arm, notebook_parameters, wilson_text


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
        passing = (f"; {wilson_text(int(s['passed']), int(s['n_pass_rate']))} of the turns pass every check "
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
        arm = main_arm(first_model(by_kind), top_k)
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
    rows = first_model(by_arm)
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
