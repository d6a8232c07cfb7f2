"""Why a consultation turn of 04 failed (issue 24): one outcome per turn, in the order the agent works.

A turn passes when every gold tool is called, every fact is in the answer, no forbidden phrase is said and
no known fact is asked again (`ragas_eval.turn_checks`). A failed turn is told apart by the first lever
that lost it:

- `error`: the turn raised or the LLM failed;
- `blocked`: the input guardrail refused the question;
- `not routed`: a gold tool was not among the router's top k (the router's loss);
- `not all called`: every gold tool was offered, the model did not call them all (its tool choice);
- `call did not answer`: every gold tool was called, and a call came back without an answer (`not_found`,
  a question back, a rejection, an error: mostly arguments the model got wrong or invented);
- `answer`: every gold tool was called and answered, and the answer misses a fact, says a forbidden
  phrase or asks again for a known fact (its answer writing);
- `passed`.

The notebook adds `failed_calls` to runs.csv (`failed_calls`); a run without the column cannot tell the
last two apart and counts them as `answer`.
"""

from __future__ import annotations

from typing import Any, Iterable

import pandas as pd

from toolroute_lab.e03_step_limits.chain_outcomes import is_true, tool_list

OUTCOMES = ("passed", "answer", "call did not answer", "not all called", "not routed", "blocked", "error")


def failed_calls(tool_log: Iterable[dict[str, Any]]) -> int:
    """The calls of a turn's tool log that came back without an answer: an error, or a result whose
    `status` is not `ok`."""
    return sum(entry.get("status") == "error"
               or (isinstance(entry.get("result"), dict) and entry["result"].get("status", "ok") != "ok")
               for entry in tool_log or [])


def outcome(turn: pd.Series | dict) -> str:
    """The outcome of one consultation turn (a row of runs.csv with `passed` from scores.csv), one of OUTCOMES."""
    if is_true(turn.get("passed")):
        return "passed"
    if str(turn.get("error") or "").strip() not in ("", "nan"):
        return "error"
    if str(turn.get("blocked") or "").strip() not in ("", "nan", "False"):
        return "blocked"
    gold = set(tool_list(turn.get("gold_tools")))
    if not gold <= set(tool_list(turn.get("routed"))):
        return "not routed"
    if not gold <= set(tool_list(turn.get("called_tools"))):
        return "not all called"
    failed = pd.to_numeric(turn.get("failed_calls"), errors="coerce")
    return "call did not answer" if pd.notna(failed) and failed > 0 else "answer"


def outcome_counts(runs: pd.DataFrame, scores: pd.DataFrame) -> pd.Series:
    """Consultation turns per outcome (OUTCOMES order, those that occur) of the rows of runs.csv given
    (pick one model and arm first), with `passed` from scores.csv (matched on model, arm and id)."""
    keys = [c for c in ("model", "arm", "id") if c in runs.columns and c in scores.columns]
    turns = runs[runs["kind"] == "scenario"].merge(scores[[*keys, "passed"]], on=keys, how="left")
    counts = pd.Series([outcome(t) for _, t in turns.iterrows()], dtype=object).value_counts()
    return counts.reindex([o for o in OUTCOMES if o in counts.index])
