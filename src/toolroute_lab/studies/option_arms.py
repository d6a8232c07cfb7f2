"""Agent options as arms (issue 24, item 4): the same agent, model, router and cap with one `AgentConfig`
option changed, measured on the dev tasks only, so that an option is adopted only when it wins there.

The arms are named in the one vocabulary of agent arms (`toolroute_lab.shared.arms.OPTIONS`): `baseline`
(the defaults), `constrained` (`constrained_calls`: the reply is sampled under the bound tools' grammar),
`lines` (`tool_result_format="lines"`), `grounded` (`retry_ungrounded`: a failed call runs again without the
arguments nobody gave), and any of them joined by "+" (`constrained+lines`).

What is measured (neither 03 nor 04 has a dev/test split of tasks or scenarios; this fixed rule makes one,
and the rest stays for test):
- 2-tool chains (`dev_chain_tasks`): of each domain's 2-tool tasks in file order, the 1st, 3rd, 5th …
  (insurance ins-t09, t11, t13; threat th10, th12, th14; plant-t10, t12), at cap 3, routed top-5: completed
  as in 03 (`step_limits.score_run`);
- scenario turns (`dev_scenario_ids`): the consultations whose number is 1 mod 4 (S1, S5, S9), each in one
  thread: passed as in 04 (`ragas_eval.turn_checks`: every gold tool, every fact, no forbidden phrase,
  nothing asked again, no error).

`run_option_arms` interleaves the arms per unit (a task, or a whole conversation: every arm runs it
before the next unit starts), so a run stopped at its `deadline` leaves the same units under every arm
(paired); `option_table` gives per kind and arm the rate with its 95% Wilson interval, the apologies
(the failed-answer text that replaces unreadable markup), repairs and seconds, and the units an arm won
and lost against the baseline.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd
from tqdm.auto import tqdm

from toolroute.agent.graph import FAILED_ANSWER
from toolroute.agent.tasks import Task
from toolroute.evaluation.metrics import wilson_interval
from toolroute.plugins import domain_names
from toolroute_lab.shared.arms import option_changes
from toolroute_lab.shared.checkpoint import RowCheckpoint
from toolroute_lab.e04_ragas_eval.ragas_eval import EvalItem, scenario_items, turn_checks
from toolroute_lab.e03_step_limits.step_limits import load_domain_tasks, score_run

DOMAINS = domain_names()
ENGLISH_START = r"\s*[A-Za-z][a-z]+\b"  # "To determine …", not "C50은" or "CNC-001에서"
AgentMaker = Callable[[str, dict[str, Any]], Any]  # (domain, options) -> toolroute.agent.Agent


def dev_chain_tasks(domains: Sequence[str] = DOMAINS) -> dict[str, list[Task]]:
    """Per domain, its 2-tool tasks at odd positions (1st, 3rd …) in file order: the dev half."""
    tasks = load_domain_tasks(list(domains))
    return {d: [t for t in ts if t.chain_length == 2][::2] for d, ts in tasks.items()}


def dev_scenario_ids(scenarios: Sequence[Any] | None = None) -> list[str]:
    """The scenarios whose number is 1 mod 4 (S1, S5, S9): the dev consultations."""
    if scenarios is None:
        from toolroute.domains.insurance.scenarios import load_scenarios  # reads the YAML only when asked

        scenarios = load_scenarios()
    return [s.id for s in scenarios if s.id[1:].isdigit() and int(s.id[1:]) % 4 == 1]


def _state_row(state: dict[str, Any]) -> dict[str, Any]:
    return {"answer_failed": bool((state.get("guard") or {}).get("answer_failed")),
            "repaired": int(state.get("repaired", 0) or 0), "loops": int(state.get("loops", 0) or 0),
            "capped": bool(state.get("capped", False)), "llm_calls": int(state.get("llm_calls", 0) or 0),
            "completion_tokens": int(state.get("completion_tokens", 0) or 0)}


def _ask(agent: Any, question: str, thread: str, cap: int) -> tuple[dict[str, Any], str, float]:
    started = time.perf_counter()
    try:
        state, error = dict(agent.ask(question, thread, max_tool_steps=cap)), ""
    except Exception as exc:  # noqa: BLE001 - one failing run must not lose the measurement
        state, error = {}, f"{type(exc).__name__}: {exc}"
    return state, error or (state.get("error") or ""), round(time.perf_counter() - started, 2)


def _chain_rows(agent: Any, arm: str, domain: str, task: Task, cap: int) -> list[dict[str, Any]]:
    state, error, seconds = _ask(agent, task.query, f"arms-{task.id}-{uuid.uuid4().hex[:8]}", cap)
    score = score_run(task, state, error)
    return [{"kind": "chain", "unit": task.id, "id": task.id, "domain": domain, "arm": arm, "passed": float(score["completed"]),
             "called_tools": score["called_tools"], "answer": score["answer"], "error": score["error"], "seconds": seconds,
             **_state_row(state)}]


def _scenario_rows(agent: Any, arm: str, items: list[EvalItem], cap: int) -> list[dict[str, Any]]:
    thread = f"arms-{items[0].conversation}-{uuid.uuid4().hex[:8]}"
    rows = []
    for item in items:
        state, error, seconds = _ask(agent, item.user, thread, cap)
        rows.append({"kind": "scenario", "unit": item.conversation, "id": item.id, "conversation": item.conversation,
                     "domain": "insurance", "arm": arm, "called_tools": [e["name"] for e in state.get("tool_log", []) or []],
                     "answer": state.get("answer", "") or "", "error": error, "seconds": seconds, **_state_row(state)})
    checks = turn_checks(pd.DataFrame(rows), items, getattr(agent, "pack", None))
    for row, check in zip(rows, checks.to_dict("records")):
        row.update(check)
    return rows


def run_option_arms(make_agent: AgentMaker, arms: Sequence[str] = ("baseline", "constrained"),
                    chain_tasks: dict[str, list[Task]] | None = None, scenario_ids: Sequence[str] | None = None,
                    cap: int = 3, deadline: float | None = None, checkpoint: str | Path | None = None, tag: str = "",
                    progress: bool = True) -> pd.DataFrame:
    """Every unit (a dev chain task, then a dev consultation) under every arm of `arms` in turn; one row per
    task run or scenario turn. `make_agent(domain, options)` builds an arm's agent (once per domain and arm).
    A unit is not started after `deadline` (`time.monotonic()`); units saved in `checkpoint` under `tag`
    (and the arm) are taken from it."""
    changes = {arm: option_changes(arm) for arm in arms}  # an unknown option fails before any model starts
    chain_tasks = dev_chain_tasks() if chain_tasks is None else chain_tasks
    scenario_ids = dev_scenario_ids() if scenario_ids is None else list(scenario_ids)
    conversations: dict[str, list[EvalItem]] = {}
    for item in scenario_items(ids=scenario_ids) if scenario_ids else []:
        conversations.setdefault(item.conversation, []).append(item)
    units = [("chain", d, t) for d, ts in chain_tasks.items() for t in ts] + [("scenario", "insurance", c) for c in conversations]
    saved = RowCheckpoint(checkpoint, ["kind", "unit", "id", "arm"], tag)
    agents: dict[tuple[str, str], Any] = {}
    rows: list[dict[str, Any]] = []
    bar = tqdm(total=len(units) * len(arms), desc="option arms", disable=not progress)
    for kind, domain, unit in units:
        ids = [unit.id] if kind == "chain" else [i.id for i in conversations[unit]]
        name = unit.id if kind == "chain" else unit
        done = {arm: [saved.get(kind=kind, unit=name, id=i, arm=arm) for i in ids] for arm in arms}
        if deadline is not None and time.monotonic() > deadline and not all(all(d) for d in done.values()):
            break  # every unit so far ran under every arm: the arms stay paired
        for arm in arms:
            if all(done[arm]):
                rows += done[arm]
            else:
                if (domain, arm) not in agents:
                    agents[(domain, arm)] = make_agent(domain, changes[arm])
                agent = agents[(domain, arm)]
                new = (_chain_rows(agent, arm, domain, unit, cap) if kind == "chain"
                       else _scenario_rows(agent, arm, conversations[unit], cap))
                for row in new:
                    if not row["error"]:
                        saved.add(row)
                rows += new
            bar.update(1)
    bar.close()
    return pd.DataFrame(rows)


def option_table(rows: pd.DataFrame, baseline: str = "baseline") -> pd.DataFrame:
    """Per kind and arm: runs (task runs or scenario turns), units, passed with the rate and its 95% Wilson
    interval, apologies (the failed-answer text), answers that open with an English word (the packs answer
    in Korean), repairs, loops, mean LLM calls and seconds; `won` / `lost`:
    the runs this arm passed and the baseline failed, and the reverse (same task or turn)."""
    rows = rows.assign(answer=rows["answer"].fillna("").astype(str), error=rows["error"].fillna("").astype(str))
    out = []
    for (kind, arm), part in rows.groupby(["kind", "arm"], sort=False):
        k, n = int(part["passed"].sum()), len(part)
        lo, hi = wilson_interval(k, n)
        row = {"kind": kind, "arm": arm, "runs": n, "units": part["unit"].nunique(), "passed": k,
               "rate": k / n if n else float("nan"), "rate_lo": lo, "rate_hi": hi,
               "apologies": int((part["answer"] == FAILED_ANSWER).sum()),
               "english_answers": int(part["answer"].str.match(ENGLISH_START).sum()),
               "repaired": int(part["repaired"].sum()), "loops": int((part["loops"] > 0).sum()),
               "errors": int((part["error"] != "").sum()),
               "llm_calls": part["llm_calls"].mean(), "seconds": part["seconds"].mean()}
        base = rows[(rows["kind"] == kind) & (rows["arm"] == baseline)].set_index("id")["passed"]
        mine = part.set_index("id")["passed"]
        both = mine.index.intersection(base.index)
        row["won"] = int(((mine[both] == 1) & (base[both] == 0)).sum())
        row["lost"] = int(((mine[both] == 0) & (base[both] == 1)).sum())
        out.append(row)
    return pd.DataFrame(out)
