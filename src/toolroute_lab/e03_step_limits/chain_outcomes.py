"""Why a step-limit run did not complete (issue 24): one outcome per run of 03's runs.csv, counted per arm.

`completed` says whether a task succeeded; to say which lever would help, the failures are told apart, in
this order (the first that applies):

- `error`: the run raised or the LLM failed (a dead server, a prompt over the context);
- `blocked`: the input guardrail refused the question;
- `cut by the cap`: the cap stopped a tool call (`capped`);
- `no tool called`: a task that needs tools, answered without any;
- `stopped early`: some gold tools called, not all, and the cap did not stop it (the model answered);
- `extra tool`: a 0-tool task answered with a tool call;
- `facts missing`: every gold tool called, but the answer leaves out or misstates a fact of their results;
- `completed`.

The ceiling arm (gold calls replayed) can only miss facts: its outcomes say how well the model writes an
answer from correct results. Read from runs.csv by the report and the docs; the notebook does not need it.
"""

from __future__ import annotations

import ast
from typing import Any

import pandas as pd

from toolroute_lab.shared.arms import arm_order, routed_name

OUTCOMES = ("completed", "facts missing", "stopped early", "no tool called", "extra tool", "cut by the cap", "blocked",
            "error")


def is_true(value: Any) -> bool:
    return str(value).strip().lower() in ("true", "1", "1.0")


def tool_list(value: Any) -> list[str]:
    """A tool list as runs.csv holds it ("['a', 'b']") or as a list."""
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    text = str(value or "").strip()
    return [str(v) for v in ast.literal_eval(text)] if text.startswith("[") else []


def outcome(run: pd.Series | dict) -> str:
    """The outcome of one run (a row of runs.csv), one of OUTCOMES."""
    if is_true(run.get("completed")):
        return "completed"
    if str(run.get("error") or "").strip() not in ("", "nan"):
        return "error"
    if str(run.get("blocked") or "").strip() not in ("", "nan"):
        return "blocked"
    if is_true(run.get("capped")):
        return "cut by the cap"
    gold, called = set(tool_list(run.get("gold_tools"))), set(tool_list(run.get("called_tools")))
    if not gold:
        return "extra tool" if called else "facts missing"
    if not called:
        return "no tool called"
    if not gold <= called:
        return "stopped early"
    return "facts missing"


def outcome_table(runs: pd.DataFrame, cap: int | None = None, min_length: int = 0) -> pd.DataFrame:
    """Runs per arm and outcome, at `cap` (all caps when None), over tasks needing at least `min_length`
    tools: one row per arm with `runs` and a column per outcome that occurs, arms in reading order. One
    model's runs (a run of several models: pick one first)."""
    frame = runs
    if cap is not None:
        frame = frame[pd.to_numeric(frame["cap"]) == int(cap)]
    frame = frame[pd.to_numeric(frame["chain_length"]) >= int(min_length)]
    if "arm" not in frame.columns:  # a run from before the arms: the router's top-k only
        frame = frame.assign(arm=[routed_name(k) for k in frame["top_k"]])
    frame = frame.assign(outcome=[outcome(r) for _, r in frame.iterrows()])
    counts = frame.groupby(["arm", "outcome"]).size().unstack("outcome", fill_value=0)
    counts = counts[[o for o in OUTCOMES if o in counts.columns]]
    counts.insert(0, "runs", counts.sum(axis=1))
    return counts.loc[arm_order(list(counts.index))].reset_index()
