"""The step-limit experiment (notebook 03): every multi-step task of every domain under every tool-step cap.

`run_step_limits` runs each task of `data/<domain>/tasks.yaml` (0 to 3 gold tools) once per cap
(`AgentConfig.max_tool_steps`) and per top-k, each run in a fresh conversation thread, and scores it:

- tools_ok: every gold tool name was called (set inclusion, as in `agent_eval`);
- tool precision / recall: called vs gold names as multisets, as in `agent_eval.score_turn` (recall
  of a 0-tool task = 1.0; precision without any call = 1.0 for a 0-tool task, else 0.0); tools_exact: equal multisets;
  order_ok: the gold chain appears in order within the calls;
- facts_ok: `Task.missing_facts(answer)` is empty;
- completed: tools_ok and facts_ok; for a 0-tool task: no tool called and facts_ok. A run that
  raised, or whose LLM failed (state `error`), is not completed and keeps its error text.

Costs per run come from the agent state (llm_calls, prompt/completion tokens, the wall time of
`Agent.ask`), plus how the turn ended: `capped` (the model still wanted tools at the cap), `loops`
(a call repeating an earlier one of the turn was refused) and `repeated_calls` (calls in the tool
log with the same name and arguments as an earlier one; possible within one reply).

Caps run in ascending order per task. A run that ended without the cap acting (`capped` false, no
error) is what every larger cap would produce too: the cap is only read when the model asks for a
tool at the limit, and decoding is greedy with a fixed seed. Greedy llama.cpp decoding is not
bit-repeatable across runs, though: in the 4 December reference 1 of 4 verified copies drifted in
wording (same tools, same score), so a copy is the likely run, not the certain one. Such rows are
copied to the larger caps with `reused_from_cap` set to the cap that actually ran (0 on rows that ran), so the sweep costs
the runs that can differ. `verify_reuse=N` runs one such copy of each of the first N tasks that have one anyway and marks them
`reuse_check` "same" or "differs" (called tools and answer compared), which measures the assumption.

One agent is built per domain and top-k; each run passes its cap (and top-k) to `Agent.ask`, which
hands them to LangGraph's `configurable` for that run only: the agent's own config never changes.

With `arms` (`toolroute_lab.shared.arms`: routed top-k, oracle, all tools, gold replay) every task runs
under every arm and cap; the rows then carry `arm` (after `domain`) and `over_context`, every table is
split by arm, and `arm_summary` gives completion, tool accuracy, facts, tokens and time per arm and
cap with 95% intervals. A row of an arm that binds no routed tools has `top_k` 0. Without `arms`
(the default) the rows and tables are those of the routed top-ks alone, as before.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import pandas as pd

from toolroute.plugins import domain_names
from toolroute.agent.tasks import Task, TaskDataError, load_tasks, tasks_path
from toolroute.agent.pack import load_pack
from toolroute.agent import AgentConfig, create_agent
from toolroute.agent.graph import changed_options
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from tqdm.auto import tqdm
from toolroute_lab.shared.checkpoint import RowCheckpoint
from toolroute_lab.shared.pool import OrderedTickets, check_concurrency, run_in_order
from toolroute.llm import chat_model
from toolroute_lab.shared.arms import NOT_ROUTED, Arm, ContextBudget, arm_table, ask_arm, budget_for, parse_arms, routed_name

AgentFactory = Callable[[str, int], Any]  # (domain, top_k) -> toolroute.agent.Agent

COST_COLUMNS = ["llm_calls", "prompt_tokens", "completion_tokens", "total_tokens", "seconds"]


# --- parameters -------------------------------------------------------------------------------------------

def _int_list(name: str, values: Any) -> list[int]:
    if isinstance(values, (int, str)) or values is None:
        values = [values]
    values = list(values)
    if not values:
        raise ValueError(f"{name}: give at least one value")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) and not (isinstance(v, float) and v.is_integer()):
            raise ValueError(f"{name}: {v!r} is not a whole number")
        if int(v) < 1:
            raise ValueError(f"{name}: {v!r} is below 1 (every value must be >= 1)")
        out.append(int(v))
    return sorted(set(out))


def load_domain_tasks(domains: Sequence[str] | str, task_ids: Iterable[str] | None = None,
                      check_tools: bool = True) -> dict[str, list[Task]]:
    """The tasks of each domain, filtered by `task_ids`; every problem is a ValueError naming the parameter."""
    if isinstance(domains, str):
        domains = [domains]
    domains = list(dict.fromkeys(domains or []))
    if not domains:
        raise ValueError("domains: give at least one domain")
    unknown = [d for d in domains if d not in domain_names()]
    if unknown:
        raise ValueError(f"domains: unknown domain(s) {unknown}; known: {list(domain_names())}")
    missing = [d for d in domains if not tasks_path(d).is_file()]
    if missing:
        files = ", ".join(str(tasks_path(d)) for d in missing)
        raise ValueError(f"domains: no task file for {missing} (expected {files}); "
                         "write it or leave the domain out")
    out: dict[str, list[Task]] = {}
    for domain in domains:
        tool_names = None
        if check_tools:
            tool_names = load_pack(domain).tool_names
        try:
            out[domain] = load_tasks(domain, tool_names=tool_names)
        except TaskDataError as exc:
            raise ValueError(f"domains: {exc}") from exc
    if task_ids is not None:
        wanted = [task_ids] if isinstance(task_ids, str) else list(task_ids)
        if not wanted:
            raise ValueError("task_ids: the subset is empty (give ids, or None for every task)")
        known = {t.id for tasks in out.values() for t in tasks}
        unknown_ids = [i for i in wanted if i not in known]
        if unknown_ids:
            raise ValueError(f"task_ids: {unknown_ids} are not tasks of {domains}")
        out = {d: [t for t in tasks if t.id in set(wanted)] for d, tasks in out.items()}
        out = {d: tasks for d, tasks in out.items() if tasks}
    if not any(out.values()):
        raise ValueError("task_ids: no task left after filtering")
    return out


def check_parameters(domains: Sequence[str] | str, caps: Sequence[int], top_ks: Sequence[int],
                     task_ids: Iterable[str] | None, arms: Sequence[str] | None = None
                     ) -> tuple[list[int], list[int], dict[str, list[Task]]]:
    """The sweep's parameters checked (ValueError naming the parameter): caps, top-ks, arms and the tasks."""
    caps, top_ks = _int_list("caps", caps), _int_list("top_ks", top_ks)
    if arms is not None:
        parse_arms(arms, top_ks)
    return caps, top_ks, load_domain_tasks(domains, task_ids)


def gold_calls(task: Task) -> list[tuple[str, dict[str, Any]]]:
    """The task's gold chain as calls: each gold tool with its pinned arguments (the ceiling arm runs them)."""
    args = list(task.args) if task.args else [{} for _ in task.gold_tools]
    return [(name, dict(a)) for name, a in zip(task.gold_tools, args)]


# --- agents -------------------------------------------------------------------------------------------------

def default_agent_factory(llm: Any, **options: Any) -> AgentFactory:
    """`create_agent` per domain with `llm`, conversations in memory only (no SQLite file written);
    `options`: further `AgentConfig` fields (e.g. `constrained_calls`, `tool_result_format`)."""

    def factory(domain: str, top_k: int):
        return create_agent(domain, llm=llm, config=AgentConfig(top_k=top_k, **options), memory_path=":memory:")

    return factory


# --- a model-free LLM for pipeline smoke runs ------------------------------------------------------------------

def replay_llm(tasks: dict[str, list[Task]] | Iterable[Task]):
    """A chat model without a model: it replays each task's gold chain (gold arguments) and answers with
    the task's facts once every gold tool has answered, else with a short partial answer.

    For smoke runs of the notebook (the tools, router, guardrails, graph, scoring, tables and figures
    all run; nothing measures a model). Tokens are reported as 0. The task is found by its query in the
    turn's messages; a turn that is no task gets a plain answer.
    """

    if isinstance(tasks, dict):
        tasks = [t for ts in tasks.values() for t in ts]
    tasks = list(tasks)

    def reply(messages: list, tools: list[str]) -> AIMessage:
        texts = [str(m.content) for m in messages if isinstance(m, HumanMessage)]
        task = next((t for t in tasks if any(t.query in text for text in texts)), None)
        if task is None:
            return AIMessage("확인했습니다.")
        seen = [m.name for m in messages if isinstance(m, ToolMessage)]
        seen += [n for n in task.gold_tools if any(f"- {n}(" in text for text in texts)]  # the final prompt
        step = sum(isinstance(m, ToolMessage) for m in messages)
        if tools and step < task.chain_length and task.gold_tools[step] in tools:
            args = dict(task.args[step]) if task.args else {}
            return AIMessage("", tool_calls=[{"name": task.gold_tools[step], "args": args, "id": f"replay{step}",
                                              "type": "tool_call"}])
        if set(task.gold_tools) <= set(seen):
            return AIMessage(" ".join(f if isinstance(f, str) else f[0] for f in task.facts) or "안녕하세요.")
        return AIMessage("확인된 내용까지만 안내드립니다.")

    class _Bound:
        def __init__(self, names: list[str]):
            self.names = names

        def invoke(self, messages, **kwargs):
            return reply(list(messages), self.names)

    class GoldReplayLLM(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "gold-replay"

        def bind_tools(self, tools, **kwargs):
            return _Bound([t["function"]["name"] if isinstance(t, dict) else t.name for t in tools])

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            return ChatResult(generations=[ChatGeneration(message=reply(list(messages), []))])

    return GoldReplayLLM()


# --- scoring ------------------------------------------------------------------------------------------------

def _call_key(entry: dict[str, Any]) -> tuple[str, str]:
    return entry["name"], json.dumps(entry.get("args", {}), sort_keys=True, ensure_ascii=False, default=str)


def _in_order(gold: list[str], called: list[str]) -> bool:
    it = iter(called)
    return all(any(name == c for c in it) for name in gold)


def score_run(task: Task, state: dict[str, Any], error: str = "") -> dict[str, Any]:
    """One run of one task: tool accuracy, facts, completion, costs and how the turn ended."""
    gold = list(task.gold_tools)
    log = state.get("tool_log", []) or []
    called = [e["name"] for e in log]
    gold_counts, called_counts = Counter(gold), Counter(called)
    hit = sum(min(n, called_counts[t]) for t, n in gold_counts.items())
    answer = state.get("answer", "") or ""
    missing = task.missing_facts(answer)
    error = error or (state.get("error") or "")
    tools_ok = set(gold) <= set(called) if gold else not called
    facts_ok = not missing
    keys = [_call_key(e) for e in log]
    prompt, completion = int(state.get("prompt_tokens", 0) or 0), int(state.get("completion_tokens", 0) or 0)
    return {
        "gold_tools": gold, "called_tools": called, "routed": list(state.get("routed", []) or []),
        "tools_ok": bool(tools_ok),
        "tool_precision": hit / len(called) if called else (1.0 if not gold else 0.0),
        "tool_recall": hit / len(gold) if gold else 1.0,
        "tools_exact": gold_counts == called_counts, "order_ok": _in_order(gold, called),
        "facts_total": len(task.facts), "facts_found": len(task.facts) - len(missing), "missing_facts": missing,
        "facts_ok": facts_ok, "completed": bool(tools_ok and facts_ok and not error),
        "tool_steps": int(state.get("tool_steps", 0) or 0), "capped": bool(state.get("capped", False)),
        "loops": int(state.get("loops", 0) or 0), "repaired": int(state.get("repaired", 0) or 0),
        "repeated_calls": len(keys) - len(set(keys)),
        "llm_calls": int(state.get("llm_calls", 0) or 0), "prompt_tokens": prompt, "completion_tokens": completion,
        "total_tokens": prompt + completion, "seconds": state.get("seconds"),
        "blocked": state.get("blocked") or "", "answer_failed": bool((state.get("guard") or {}).get("answer_failed")),
        "answer": answer, "error": error,
    }


# --- the run ------------------------------------------------------------------------------------------------

def run_step_limits(domains: Sequence[str] | str, caps: Sequence[int], top_ks: Sequence[int] = (5,), llm: Any = None,
                    task_ids: Iterable[str] | None = None, progress: bool = True,
                    agent_factory: AgentFactory | None = None, checkpoint: str | Path | None = None,
                    checkpoint_tag: str = "", reuse_uncapped: bool = True, verify_reuse: int = 0,
                    max_concurrency: int = 1, arms: Sequence[str] | None = None,
                    budget: ContextBudget | None = None, agent_options: dict[str, Any] | None = None) -> pd.DataFrame:
    """One row per domain × task × top-k × cap (see the module docstring for the columns and the reuse rule).

    Parameters are checked before any agent is built or any LLM started. `agent_factory(domain,
    top_k)` builds the agent (default: `create_agent` with `llm`, or `toolroute.llm.chat_model()`).
    With `checkpoint` (a JSONL path) every finished run is saved, and runs already saved
    under the same `checkpoint_tag` (say, the LLM) are taken from it instead of run again.

    `max_concurrency` tasks run at once (`toolroute_lab.shared.pool`: each task's caps in order in
    one worker, one agent per domain and top-k shared by the workers); rows and checkpoint lines come
    out in task order whatever order the tasks finish in, and `verify_reuse` picks the same copies.

    `arms` (None: the routed top-ks, rows without an `arm` column) runs every arm of
    `arms.parse_arms(arms, top_ks)`; `budget` checks the first prompt of the arms that bind a fixed tool
    list (oracle, all tools), a run that would not fit is not sent (`over_context`, with the error).

    `agent_options` (further `AgentConfig` fields for the default factory: `constrained_calls`,
    `tool_result_format`) are part of the checkpoint tag: runs under other options are never reused.
    """

    caps, top_ks, tasks = check_parameters(domains, caps, top_ks, task_ids, arms)
    check_concurrency(max_concurrency)
    options = changed_options(**(agent_options or {}))  # a bad option fails here, before any model starts
    if options:
        checkpoint_tag = f"{checkpoint_tag}|agent={json.dumps(options, sort_keys=True)}"
    arm_list: list[Arm | None] = list(parse_arms(arms, top_ks)) if arms is not None else [None]
    keys = ["domain", "task_id", "top_k", "cap", "query"] + (["arm"] if arms is not None else [])
    saved = RowCheckpoint(checkpoint, keys, checkpoint_tag)
    if agent_factory is None:
        if llm is None:
            llm = chat_model()
        agent_factory = default_agent_factory(llm, **options)
    jobs = [(domain, top_k, arm, task) for domain, domain_tasks in tasks.items() for arm in arm_list
            for top_k in ([arm.top_k] if arm is not None else top_ks)
            for task in domain_tasks]  # caps innermost (in a job): the same prompt again, a server's prompt cache helps
    bar = tqdm(total=len(jobs) * len(caps), desc="step-limit runs", disable=not progress)
    tickets = OrderedTickets(verify_reuse)
    agents: dict[tuple[str, int], Any] = {}
    agents_lock = threading.Lock()
    if len(saved):
        print(f"checkpoint {checkpoint}: {len(saved)} finished run(s) taken, not run again")

    def agent_for(domain: str, top_k: int):
        with agents_lock:  # built once, only when a run is left to do
            if (domain, top_k) not in agents:
                agents[(domain, top_k)] = agent_factory(domain, top_k)
            return agents[(domain, top_k)]

    def run_task(index: int) -> list[tuple[dict[str, Any], bool]]:
        """The rows of one task, every cap in ascending order; (row, whether to save it)."""
        domain, top_k, arm, task = jobs[index]
        arm_key = {"arm": arm.name} if arm is not None else {}
        out: list[tuple[dict[str, Any], bool]] = []
        uncapped = None  # the first row of this task that ran to its end without the cap acting
        asked = False  # one verified copy per task at most, so the checks spread over tasks
        try:
            for cap in caps:
                check = ""
                if reuse_uncapped and uncapped is not None:
                    granted = tickets.take(index) if not asked else False
                    asked = True
                    if not granted:
                        out.append(({**uncapped, "cap": cap, "reused_from_cap": uncapped["cap"], "reuse_check": ""},
                                    False))
                        bar.update(1)
                        continue
                    check = "pending"
                done = saved.get(domain=domain, task_id=task.id, top_k=top_k, cap=cap, query=task.query, **arm_key)
                if done is not None:
                    out.append(({"reused_from_cap": 0, **done, "reuse_check": _reuse_check(check, uncapped, done)},
                                False))
                    uncapped = _uncapped(out[-1][0], uncapped)
                    bar.update(1)
                    continue
                agent = agent_for(domain, top_k if top_k != NOT_ROUTED else top_ks[0])
                thread = f"steps-{domain}-{task.id}-{arm.name if arm else ''}-k{top_k}-c{cap}-{uuid.uuid4().hex[:8]}"
                over: dict[str, bool] = {}
                if arm is None:
                    try:
                        state, error = dict(agent.ask(task.query, thread, max_tool_steps=cap, top_k=top_k)), ""
                    except Exception as exc:  # noqa: BLE001 - one failing task must not lose the run
                        state, error = {}, f"{type(exc).__name__}: {exc}"
                else:
                    state, error, too_long = ask_arm(agent, arm, task.query, thread, gold_tools=task.gold_tools,
                                                     gold_calls=gold_calls(task), max_tool_steps=cap, budget=budget)
                    over = {"over_context": too_long}
                row = {"domain": domain, **arm_key, "task_id": task.id, "top_k": top_k, "cap": cap,
                       "chain_length": task.chain_length, "query": task.query, **score_run(task, state, error),
                       **over, "reused_from_cap": 0}
                out.append(({**row, "reuse_check": _reuse_check(check, uncapped, row)},
                            not row["error"]))  # a failed run (server down …) is run again next time
                uncapped = _uncapped(row, uncapped)
                bar.update(1)
        finally:
            tickets.skip(index)  # a task that never reached a copy (or failed) holds no later task back
        return out

    def commit(index: int, rows: list[tuple[dict[str, Any], bool]]) -> None:
        for row, save in rows:
            if save:
                saved.add({k: v for k, v in row.items() if k != "reuse_check"})

    results = run_in_order(range(len(jobs)), run_task, max_concurrency, commit=commit)
    bar.close()
    return pd.DataFrame([row for rows in results for row, _ in rows])


def run_models(models: Sequence[Any], domains: Sequence[str] | str, caps: Sequence[int], top_ks: Sequence[int] = (5,),
               checkpoint: str | Path | None = None, code: str = "", **kwargs: Any) -> pd.DataFrame:
    """`run_step_limits` for each model of the notebook (`select_llms`), one after the other, each with
    its own `max_concurrency` and checkpoint tag (the model's tag and the `code` digest); the rows of
    all, `model` (the model's name in `llms`) first. Each model's wall seconds go to its `run_seconds`."""
    budget = kwargs.pop("budget", None)  # the embedded model's context: an endpoint's arms are all sent
    parts = []
    for model in models:
        start = time.perf_counter()
        part = run_step_limits(domains, caps, top_ks, llm=model.chat, checkpoint=checkpoint,
                               checkpoint_tag=f"{model.tag}|code={code}", max_concurrency=model.max_concurrency,
                               budget=budget_for(model, budget), **kwargs)
        model.run_seconds = round(time.perf_counter() - start, 1)
        part.insert(0, "model", model.name)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _uncapped(row: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any] | None:
    """The row larger caps may copy: the first one of the task that ended without the cap acting."""
    if previous is not None:
        return previous
    return row if not row.get("capped") and not row.get("error") else None


def _reuse_check(check: str, source: dict[str, Any] | None, row: dict[str, Any]) -> str:
    """For a run made although a smaller cap's row could have been copied: did it come out the same?"""
    if check != "pending" or source is None:
        return ""
    same = list(source["called_tools"]) == list(row["called_tools"]) and source["answer"] == row["answer"]
    return "same" if same else "differs"


# --- tables -------------------------------------------------------------------------------------------------

def _by(frame: pd.DataFrame, by: list[str]) -> list[str]:
    """`by`, led by `model` when the runs come from several models (a frame without the column: one model),
    then `arm` when the runs come from arms."""
    lead = [c for c in ("model", "arm") if c in frame.columns and c not in by]
    return [*lead, *by]


def _aggregate(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    by = _by(frame, by)
    f = frame.assign(errored=frame["error"].fillna("").astype(str) != "", looped=frame["loops"] > 0,
                     repeated=frame["repeated_calls"] > 0, seconds=pd.to_numeric(frame["seconds"], errors="coerce"))
    table = f.groupby(by, sort=True).agg(
        runs=("task_id", "size"), completed=("completed", "sum"), completion=("completed", "mean"),
        tools_ok=("tools_ok", "mean"), facts_ok=("facts_ok", "mean"), tool_precision=("tool_precision", "mean"),
        tool_recall=("tool_recall", "mean"), tool_steps=("tool_steps", "mean"), llm_calls=("llm_calls", "mean"),
        prompt_tokens=("prompt_tokens", "mean"), completion_tokens=("completion_tokens", "mean"),
        total_tokens=("total_tokens", "mean"), seconds=("seconds", "mean"), capped=("capped", "mean"),
        loops=("looped", "mean"), repeated=("repeated", "mean"), errors=("errored", "sum"),
    ).reset_index()
    table["completed"] = table["completed"].astype(int)
    return table


def summarise(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The tables of the report (rates are shares of runs; costs are means per run).

    - by_cap: every task pooled, per top-k and cap, with the change from the previous cap
      (d_completed, d_tokens, d_llm_calls, d_seconds) and tokens per extra completed task;
    - by_length: per top-k, required chain length and cap;
    - by_domain: per domain, top-k and cap.

    With a `model` column (runs of several models), every table has one block per model, `model` first.
    """
    by_cap = _aggregate(frame, ["top_k", "cap"])
    parts = []
    for _, group in by_cap.groupby(_by(frame, ["top_k"]), sort=True):
        group = group.sort_values("cap").copy()
        group["d_completed"] = group["completed"].diff()
        group["d_completion"] = group["completion"].diff()
        for col in ["total_tokens", "llm_calls", "seconds"]:
            group[f"d_{col}"] = group[col].diff()
        # extra tokens for the whole task set per extra completed task (inf when nothing was gained)
        extra_tokens = group["d_total_tokens"] * group["runs"]
        group["tokens_per_extra_completed"] = extra_tokens / group["d_completed"].where(group["d_completed"] > 0)
        parts.append(group)
    by_cap = pd.concat(parts, ignore_index=True)
    return {"by_cap": by_cap, "by_length": _aggregate(frame, ["top_k", "chain_length", "cap"]),
            "by_domain": _aggregate(frame, ["domain", "top_k", "cap"])}


def cut_chains(frame: pd.DataFrame) -> pd.DataFrame:
    """Runs that failed at a cap although the same task was completed at a higher cap.

    One row per (task, top-k, failing cap): the smallest higher cap that completed it, whether the
    cap was hit (`capped`: the model still wanted tools), the tool steps run, the calls made, the
    first gold tool not reached (`cut_before`: where the cap cut the chain) and the facts missing.
    `cause` is "cap" when the run was capped or stopped at the cap with gold tools still missing,
    else "other" (the model took another path at this cap).
    """
    columns = ["domain", "task_id", "top_k", "chain_length", "gold_tools", "cap", "completed_at", "capped",
               "tool_steps", "called_tools", "cut_before", "missing_facts", "cause", "query"]
    rows = []
    by = _by(frame, ["domain", "task_id", "top_k"])
    for keys, group in frame.groupby(by, sort=True):
        domain, task_id, top_k = keys[-3:]
        model = dict(zip(by[:-3], keys[:-3]))  # model and arm, when the runs have them
        group = group.sort_values("cap")
        done = group[group["completed"].astype(bool)]
        if done.empty:
            continue
        for _, run in group[~group["completed"].astype(bool)].iterrows():
            later = done[done["cap"] > run["cap"]]
            if later.empty:
                continue
            called = list(run["called_tools"])
            remaining = Counter(called)
            cut_before = ""
            for name in run["gold_tools"]:
                if remaining[name] > 0:
                    remaining[name] -= 1
                else:
                    cut_before = name
                    break
            at_cap = bool(run["capped"]) or (run["tool_steps"] >= run["cap"] and bool(cut_before))
            rows.append({**model, "domain": domain, "task_id": task_id, "top_k": top_k, "chain_length": run["chain_length"],
                         "gold_tools": list(run["gold_tools"]), "cap": run["cap"], "completed_at": int(later["cap"].min()),
                         "capped": bool(run["capped"]), "tool_steps": run["tool_steps"], "called_tools": called,
                         "cut_before": cut_before, "missing_facts": list(run["missing_facts"]),
                         "cause": "cap" if at_cap else "other", "query": run["query"]})
    return pd.DataFrame(rows, columns=_by(frame, columns))


def verdict(frame: pd.DataFrame, proposed: int = 3) -> list[str]:
    """Markdown lines answering: is `proposed` the right cap, and what does each extra step cost?
    (per model, under a heading each, when the runs come from several models)"""
    for column, label in (("model", "Model"), ("arm", "Arm")):  # one heading per model, then per arm
        if column in frame.columns and frame[column].nunique() > 1:
            lines = []
            for value, part in frame.groupby(column, sort=False):
                lines += [f"**{label} {value}**", *verdict(part.drop(columns=[column]), proposed)]
            return lines
        frame = frame.drop(columns=[column], errors="ignore")
    tables = summarise(frame)
    cuts = cut_chains(frame)
    lines = []
    for top_k, t in tables["by_cap"].groupby("top_k", sort=True):
        t = t.set_index("cap").sort_index()
        n = int(t["runs"].iloc[0])
        best = t["completed"].max()
        smallest_best = int(t.index[t["completed"] == best].min())
        head = f"**top-k {top_k}** ({n} tasks per cap): completed " + ", ".join(
            f"cap {c}: {int(r.completed)}/{n} ({r.completion:.0%})" for c, r in t.iterrows()) + "."
        lines.append(head)
        if proposed in t.index:
            at = t.loc[proposed]
            cut_here = cuts[(cuts["top_k"] == top_k) & (cuts["cap"] == proposed) & (cuts["cause"] == "cap")]
            if smallest_best == proposed:
                lines.append(f"- Cap {proposed} is the smallest cap reaching the best completion ({int(best)}/{n}); "
                             f"higher caps complete nothing more. Chains cut by cap {proposed}: {len(cut_here)}.")
            elif at["completed"] == best:
                lines.append(f"- Cap {smallest_best} already completes as many tasks ({int(best)}/{n}) as cap {proposed}; "
                             f"cap {proposed} is more than these tasks need (it costs "
                             f"{at['total_tokens'] - t.loc[smallest_best, 'total_tokens']:+.0f} tokens and "
                             f"{at['llm_calls'] - t.loc[smallest_best, 'llm_calls']:+.2f} LLM calls per task).")
            else:
                lines.append(f"- Cap {proposed} completes {int(at['completed'])}/{n}; cap {smallest_best} completes "
                             f"{int(best)}/{n} (+{int(best - at['completed'])}), at "
                             f"{t.loc[smallest_best, 'total_tokens'] - at['total_tokens']:+.0f} tokens and "
                             f"{t.loc[smallest_best, 'seconds'] - at['seconds']:+.1f} s per task; "
                             f"{len(cut_here)} chain(s) cut at cap {proposed}.")
            lines.append(f"- At cap {proposed}: capped in {at['capped']:.0%} of runs, loops in {at['loops']:.0%}, "
                         f"{at['llm_calls']:.2f} LLM calls, {at['total_tokens']:.0f} tokens and "
                         f"{at['seconds']:.1f} s per task; {int(at['errors'])} errors.")
        else:
            lines.append(f"- Cap {proposed} was not run (caps: {list(t.index)}).")
        caps = list(t.index)
        for lo, hi in zip(caps, caps[1:]):
            a, b = t.loc[lo], t.loc[hi]
            gained = int(b["completed"] - a["completed"])
            per_task = (f"{b['total_tokens'] - a['total_tokens']:+.0f} tokens, {b['llm_calls'] - a['llm_calls']:+.2f} "
                        f"LLM calls, {b['seconds'] - a['seconds']:+.1f} s per task")
            lines.append(f"- Cap {lo} → {hi}: {gained:+d} completed ({b['completion'] - a['completion']:+.0%}), "
                         f"{per_task}.")
        lines.append("- Gold tools all called / facts all in the answer, per cap: " + ", ".join(
            f"cap {c}: {r.tools_ok:.0%} / {r.facts_ok:.0%}" for c, r in t.iterrows()) + ".")
        if n < 20:
            lines.append(f"- Only {n} tasks per cap: one task is {1 / n:.0%} of completion; read the differences "
                         "as counts, not rates.")
        by_len = tables["by_length"][tables["by_length"]["top_k"] == top_k]
        if proposed in t.index:
            parts = [f"{int(length)}-tool {r.completion:.0%}" for length, r in
                     by_len[by_len["cap"] == proposed].set_index("chain_length").iterrows()]
            lines.append(f"- Completion at cap {proposed} by required chain length: " + ", ".join(parts) + ".")
    return lines


ARM_RATES = ["completion", "tools_ok", "tools_exact", "facts_ok"]
ARM_MEANS = ["tool_recall", "tool_precision", "llm_calls", "prompt_tokens", "total_tokens", "seconds"]


def arm_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per arm and cap (and model, when the runs have it), over every task: completion, every gold tool
    called, the exact gold calls, every fact in the answer (rates with 95% Wilson intervals; a run that
    did not fit the context counts as failed), tool recall / precision, LLM calls, tokens and seconds
    (means with 95% bootstrap intervals, over the runs that were sent), and `over_context` (runs not sent)."""
    f = frame if "arm" in frame.columns else frame.assign(arm=[routed_name(k) for k in frame["top_k"]])
    over = f["over_context"].astype(bool) if "over_context" in f.columns else pd.Series(False, index=f.index)
    f = f.assign(completion=f["completed"].astype(float), over_context=over,
                 **{m: pd.to_numeric(f[m], errors="coerce").where(~over) for m in ARM_MEANS},
                 **{r: f[r].astype(float) for r in ARM_RATES[1:]})
    by = [c for c in ("model",) if c in f.columns] + ["arm", "cap"]
    table = arm_table(f, by, ARM_RATES, ARM_MEANS)
    counts = f.groupby(by, sort=False)["over_context"].sum().rename("over_context").reset_index()
    table = table.merge(counts, on=by, how="left")
    return table[[*by, "runs", "over_context", *[c for c in table.columns if c not in {*by, "runs", "over_context"}]]]


# The figures of this experiment are drawn by toolroute_lab.e03_step_limits.plots (completion_plot, cost_plot) and
# toolroute_lab.shared.figures (arm_cost_plot, shared with 04).


def flat(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with list columns as JSON text, for CSV."""
    out = frame.copy()
    for col in out.columns:
        if out[col].map(lambda v: isinstance(v, (list, dict))).any():
            out[col] = out[col].map(lambda v: json.dumps(v, ensure_ascii=False, default=str)
                                    if isinstance(v, (list, dict)) else v)
    return out


LIST_COLUMNS = ["gold_tools", "called_tools", "routed", "missing_facts"]


def read_runs(path: str | Path) -> pd.DataFrame:
    """`runs.csv` as written by `flat(runs)`, back to the frame `run_step_limits` returned."""
    frame = pd.read_csv(path, keep_default_na=False)
    for col in LIST_COLUMNS:
        if col in frame.columns:
            frame[col] = frame[col].map(lambda v: json.loads(v) if isinstance(v, str) and v.startswith("[") else [])
    frame["seconds"] = pd.to_numeric(frame["seconds"], errors="coerce")
    return frame
