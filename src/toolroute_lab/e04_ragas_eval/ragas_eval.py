"""RAGAS evaluation of the agent (notebook 04): scenarios, RAG questions and eval queries, run through
the agent and scored with RAGAS metrics.

Three kinds of items, each one agent turn:
- "scenario": the turns of `data/insurance/scenarios.yaml`, each consultation in one thread (so the
  rewriter and memory work as in a call); reference = the gold calls with their arguments and the facts.
- "rag": the questions of `data/insurance/rag_qa.jsonl`, each in a fresh thread; reference = the RAG
  tool of the question's collection (name only), the answer phrase, and as reference contexts the
  chunks of the default ingest that hold the answer (the hit rule of `rag_eval.is_hit`).
- "query": rows of a routing eval split (`data/insurance/queries/*.jsonl`), each in a fresh thread;
  reference = the expected tool names only (no arguments), or no call.

Metrics that need no LLM (always): ToolCallAccuracy and ToolCallF1 (tool names and arguments),
a name-only tool F1 (ToolCallF1 on calls stripped of arguments: the query rows have no gold
arguments; 1.0 for a correct no-call, where RAGAS' F1 of two empty sets is 0), StringPresence of each fact in the answer, CHRF of the answer against the facts (character
n-grams: RAGAS' ROUGE tokenizer drops Hangul), NonLLMContextPrecisionWithReference and NonLLMContextRecall
for turns that retrieved passages. With a judge LLM: Faithfulness (turns with passages),
AnswerRelevancy (our embedder behind RAGAS' embedding interface) and AgentGoalAccuracyWithReference
(scenario turns, reference = the facts). A judgement that fails (unparsable output, timeout) is
recorded as failed with its reason and counted, never dropped or scored 0.

The seed's per-turn checks on scenario turns (`turn_checks`, columns of `score_rows`): `forbidden` (the
answer holds a phrase of the turn's `answer_must_not`), `reasked` (it asks for an age, sex, customer or
product the conversation's user turns already gave: `agent_eval.reasked_facts`) and `passed` (every gold
tool name called, every fact in the answer, neither of those, no error): the scenario pass rule. The
summaries then give `pass_rate` and the turns that failed each check, per kind and per scenario.

Tool calls are converted to RAGAS messages here from the agent's `tool_log` (RAGAS' LangGraph
converter drops calls kept only in `AIMessage.tool_calls`).

With `arms` (`run_arms`, `toolroute_lab.shared.arms`) every item runs under every arm (routed top-k,
oracle = the item's gold tools bound, all tools, gold replay = the gold calls run and only the answer
written; query rows naming tools without arguments have no gold calls and are left out of that arm);
rows and scores then carry `arm`, the tables are split by it, and `arm_summary` gives completion, tool
accuracy, facts, tokens and time per arm and kind with 95% intervals. Without arms nothing changes.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import time
import uuid
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import pandas as pd

from toolroute_lab.e03_step_limits.step_limits import flat  # noqa: F401 - list columns as JSON, for CSV
from toolroute.domains.insurance.scenarios import load_scenarios
from toolroute.domains.insurance.documents import build_documents
from toolroute.domains.insurance.knowledge import strip_header
from toolroute_lab.e01_ingest.rag_eval import chunks_by_collection, is_hit
from toolroute_lab.e01_ingest.rag_eval import load_rag_qa
from toolroute.queries import load_queries
from toolroute.config import queries_path
from toolroute.agent.pack import load_pack
from types import SimpleNamespace
from toolroute_lab.e03_step_limits.step_limits import replay_llm as replay
from tqdm.auto import tqdm
from toolroute_lab.shared.checkpoint import RowCheckpoint
from toolroute_lab.shared.pool import check_concurrency, run_in_order
from toolroute.config import llm_limits
from toolroute.llm.retry import AsyncRetryOnBusy
import httpx
from toolroute.embeddings import get_embedder
from toolroute_lab.shared.arms import ROUTED, Arm, ContextBudget, arm_table, ask_arm, budget_for, parse_arms
from toolroute_lab.shared.agent_eval import fact_in, forbidden_phrases, known_context, reasked_facts
from toolroute.text import without_spaces

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

KINDS = ("scenario", "rag", "query")
RAG_TOOLS = ("rag_terms_query_engine", "rag_product_info_query_engine")
RAG_TOOL_OF = {"terms": RAG_TOOLS[0], "product_info": RAG_TOOLS[1]}  # the tool that searches each collection
MAX_TOOL_TEXT = 2000  # characters of a tool result kept in the RAGAS conversation


# --- items --------------------------------------------------------------------------------------------------

@dataclass
class EvalItem:
    """One agent turn to run and score; `conversation` groups turns that share a thread."""

    kind: str
    id: str
    conversation: str
    user: str
    reference_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    with_args: bool = True  # False: the reference names tools only (query rows)
    facts: list[str] = field(default_factory=list)
    reference_contexts: list[str] = field(default_factory=list)
    answer_must_not: list[str] = field(default_factory=list)

    @property
    def reference_text(self) -> str:
        """The outcome a judge compares against: the facts, or the tools when there are none."""
        if self.facts:
            return " / ".join(self.facts)
        if self.reference_calls:
            return "도구 " + ", ".join(name for name, _ in self.reference_calls) + " 의 결과로 답한다"
        return "도구를 부르지 않고 정중히 답한다"


def scenario_items(scenarios: Iterable[Any] | None = None, ids: Iterable[str] | None = None) -> list[EvalItem]:
    scenarios = list(scenarios) if scenarios is not None else load_scenarios()
    if ids is not None:
        wanted = list(ids)
        unknown = sorted(set(wanted) - {s.id for s in scenarios})
        if unknown:
            raise ValueError(f"scenario_ids: unknown scenario(s) {unknown}")
        scenarios = [s for s in scenarios if s.id in set(wanted)]
    items = []
    for s in scenarios:
        for number, turn in enumerate(s.turns, start=1):
            items.append(EvalItem(
                kind="scenario", id=f"{s.id}-t{number}", conversation=s.id, user=turn.user,
                reference_calls=[(c.tool, dict(c.args)) for c in turn.expected_calls],
                facts=list(turn.facts) + [t.text for t in turn.totals], answer_must_not=list(turn.answer_must_not)))
    return items


def reference_chunks(questions: Sequence[Any], size: int = 500, overlap: int = 100,
                     docs: Sequence[Any] | None = None) -> dict[str, list[str]]:
    """Per RAG question, the text of every chunk (as ingested) that holds its answer."""

    chunks = chunks_by_collection(docs if docs is not None else build_documents(), size, overlap)
    out = {}
    for q in questions:
        out[q.id] = [strip_header(c.text) for c in chunks[q.collection]
                     if is_hit(q, c.document, c.page, c.page_end, c.text)]
    return out


def rag_items(limit: int | None = None, path: str | Path | None = None) -> list[EvalItem]:
    """The RAG questions (every `len/limit`-th when limited, so both collections stay in)."""

    questions = _every_nth(load_rag_qa(path), limit)
    refs = reference_chunks(questions)
    return [EvalItem(kind="rag", id=q.id, conversation=q.id, user=q.question, facts=[q.answer_contains],
                     reference_calls=[(RAG_TOOL_OF[q.collection], {})], with_args=False,
                     reference_contexts=refs[q.id]) for q in questions]


def query_items(path: str | Path, limit: int | None = None, known_tools: Iterable[str] | None = None) -> list[EvalItem]:
    """Rows of a routing eval split (every `len/limit`-th when limited); reference = tool names only."""

    queries = _every_nth(load_queries(path, known_tools), limit)
    return [EvalItem(kind="query", id=q.id, conversation=q.id, user=q.query, with_args=False,
                     reference_calls=[(name, {}) for name in q.expected_tools]) for q in queries]


def build_items(scenario_ids: Iterable[str] | None = None, rag_ids: Iterable[str] | None = None,
                rag_limit: int | None = None, query_split: str = "test", query_limit: int | None = None) -> list[EvalItem]:
    """The notebook's items; every bad parameter is a ValueError naming it, raised before any model starts.

    `scenario_ids` / `rag_ids`: None = all (rag: `rag_limit` of them), [] = none; `query_split` "" = none.
    """

    items = scenario_items(ids=scenario_ids) if scenario_ids is None or list(scenario_ids) else []
    if rag_ids is None:
        items += rag_items(limit=rag_limit)
    elif list(rag_ids):
        wanted = list(rag_ids)
        every = rag_items()
        unknown = sorted(set(wanted) - {i.id for i in every})
        if unknown:
            raise ValueError(f"rag_ids: unknown question id(s) {unknown} (see data/insurance/rag_qa.jsonl)")
        items += [i for i in every if i.id in set(wanted)]
    if query_split:
        path = queries_path("insurance", query_split)
        if not path.is_file():
            raise ValueError(f"query_split: no split {query_split!r} ({path} does not exist)")

        items += query_items(path, query_limit, known_tools=load_pack("insurance").tool_names)
    if not items:
        raise ValueError("scenario_ids, rag_ids, query_split: the selection is empty, nothing to evaluate")
    return items


def replay_llm(items: Sequence[EvalItem]):
    """A chat model without a model, for smoke runs: it replays each item's gold calls (RAG questions
    search with the question) and answers with its facts (see `step_limits.replay_llm`)."""


    tasks = []
    for item in items:
        args = [({"query": item.user} if name in RAG_TOOLS and not a else dict(a)) for name, a in item.reference_calls]
        tasks.append(SimpleNamespace(id=item.id, query=item.user, gold_tools=[n for n, _ in item.reference_calls],
                                     args=args, facts=list(item.facts), chain_length=len(item.reference_calls)))
    return replay(tasks)


def gold_calls_of(item: EvalItem) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls the ceiling arm replays for an item: a scenario turn's gold calls with their arguments,
    a RAG question's tool searching with the question (as `replay_llm`), none for a no-call query row;
    None for a query row naming tools without arguments (nothing to replay)."""
    if item.kind == "rag":
        return [(name, {"query": item.user} if not args else dict(args)) for name, args in item.reference_calls]
    if item.with_args or not item.reference_calls:
        return [(name, dict(args)) for name, args in item.reference_calls]
    return None


def judgeable(metric: str, run: Any, item: EvalItem) -> bool:
    """Whether a judged metric applies to a row: faithfulness to a turn that retrieved passages and
    answered, answer relevancy to a turn that answered, goal accuracy to a consultation turn."""
    if metric == "faithfulness":
        return bool(run["answer"]) and len(run["retrieved_contexts"]) > 0
    if metric == "answer_relevancy":
        return bool(run["answer"])
    if metric == "agent_goal_accuracy":
        return item.kind == "scenario"
    raise ValueError(f"judge_metrics: unknown metric {metric!r}; known: {LLM_METRICS}")


def judge_subset(runs: pd.DataFrame, items: Sequence[EvalItem], per_metric: int | None,
                 metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """The rows to judge, each with the metrics it is judged on (`judge_metrics`), so that every metric
    gets its own sample instead of sharing one that may hold none of its rows (the old per-kind limit
    judged faithfulness 0 times). Faithfulness is judged on every turn that retrieved passages; the
    other metrics on `per_metric` of their applicable rows (None: all), spread over the rows (and so
    over kinds), per model and arm."""
    by_id = {i.id: i for i in items}
    metrics = LLM_METRICS if metrics is None else metrics
    chosen: dict[Any, list[str]] = {}
    groups = runs.groupby(_arms(runs), sort=False) if _arms(runs) else [(None, runs)]
    for _, group in groups:
        for metric in metrics:
            eligible = [index for index, run in group.iterrows() if judgeable(metric, run, by_id[run["id"]])]
            keep = eligible if metric == "faithfulness" else _every_nth(eligible, per_metric)
            for index in keep:
                chosen.setdefault(index, []).append(metric)
    subset = runs.loc[[i for i in runs.index if i in chosen]].copy()
    subset["judge_metrics"] = [chosen[i] for i in subset.index]
    return subset


def _every_nth(rows: Sequence[Any], limit: int | None) -> list[Any]:
    rows = list(rows)
    if limit is None or limit >= len(rows):
        return rows
    if limit < 1:
        raise ValueError(f"limit: {limit} is below 1 (use None for every row)")
    step = len(rows) / limit
    return [rows[int(i * step)] for i in range(limit)]


# --- running ------------------------------------------------------------------------------------------------

def retrieved_passages(tool_log: Iterable[dict[str, Any]]) -> list[str]:
    """The passage texts the RAG tools returned in a turn (contextual header removed), in order."""

    out = []
    for entry in tool_log or []:
        result = entry.get("result")
        if entry.get("name") in RAG_TOOLS and isinstance(result, dict):
            out += [strip_header(p.get("text", "")) for p in result.get("passages", []) or []]
    return out


def run_items(agent: Any, items: Sequence[EvalItem], progress: bool = True, checkpoint: str | Path | None = None,
              checkpoint_tag: str = "", max_concurrency: int = 1, arm: Arm | None = None,
              budget: ContextBudget | None = None) -> pd.DataFrame:
    """Each item through `agent.ask`; turns of one conversation share a thread. One row per item, in
    the items' order; a turn that raised keeps its row with the error.

    With `checkpoint` (a JSONL path) each finished turn is saved; a conversation whose turns
    were all saved under the same `checkpoint_tag` is taken from it, any other is run again from its
    first turn (its memory lived in the interrupted process). `max_concurrency` conversations run at
    once (`toolroute_lab.shared.pool`: a conversation's turns in order in one worker); rows and
    checkpoint lines come out in conversation order whatever order they finish in.

    With `arm` each turn runs under it (`arms.ask_arm`, `budget` for the arms binding a fixed list) and
    the rows carry `arm` and `over_context`; without, `agent.ask(user, thread)` as always."""


    saved = RowCheckpoint(checkpoint, ["kind", "id", "user"], checkpoint_tag)
    conversations: dict[str, list[EvalItem]] = {}
    for item in items:
        conversations.setdefault(item.conversation, []).append(item)
    reuse = {c for c, turns in conversations.items()
             if all(saved.get(kind=i.kind, id=i.id, user=i.user) is not None for i in turns)}
    if reuse:
        print(f"checkpoint {checkpoint}: {sum(len(conversations[c]) for c in reuse)} finished turn(s) taken, not run again")
    bar = tqdm(total=len(items), desc="agent turns", disable=not progress)

    def run_conversation(conversation: str) -> list[tuple[dict[str, Any], bool]]:
        """Its rows, turn by turn in one thread; (row, whether to save it)."""
        if conversation in reuse:
            bar.update(len(conversations[conversation]))
            return [(saved.get(kind=i.kind, id=i.id, user=i.user), False) for i in conversations[conversation]]
        thread = f"ragas-{conversation}-{uuid.uuid4().hex[:8]}"
        out = []
        for item in conversations[conversation]:
            started = time.perf_counter()
            over: dict[str, Any] = {}
            if arm is None:
                try:
                    state, error = dict(agent.ask(item.user, thread)), ""
                except Exception as exc:  # noqa: BLE001 - one failing turn must not lose the run
                    state, error = {}, f"{type(exc).__name__}: {exc}"
            else:
                state, error, too_long = ask_arm(agent, arm, item.user, thread,
                                                 gold_tools=[name for name, _ in item.reference_calls],
                                                 gold_calls=gold_calls_of(item), budget=budget)
                over = {"arm": arm.name, "over_context": too_long}
            log = [{"name": e["name"], "args": e.get("args", {}), "result": e.get("result")}
                   for e in state.get("tool_log", []) or []]
            row = {
                "kind": item.kind, "id": item.id, "conversation": item.conversation, "user": item.user,
                "rewritten": state.get("rewritten", ""), "routed": list(state.get("routed", []) or []),
                "tool_log": log, "called_tools": [e["name"] for e in log],
                "gold_tools": [name for name, _ in item.reference_calls],
                "answer": state.get("answer", "") or "", "retrieved_contexts": retrieved_passages(log),
                "blocked": state.get("blocked") or "", "capped": bool(state.get("capped", False)),
                "llm_calls": int(state.get("llm_calls", 0) or 0), "prompt_tokens": int(state.get("prompt_tokens", 0) or 0),
                "completion_tokens": int(state.get("completion_tokens", 0) or 0),
                "seconds": round(time.perf_counter() - started, 3), "error": error or (state.get("error") or ""),
                **over,
            }
            out.append((row, not row["error"]))
            bar.update(1)
        return out

    def commit(index: int, rows: list[tuple[dict[str, Any], bool]]) -> None:
        for row, save in rows:
            if save:
                saved.add(json.loads(json.dumps(row, ensure_ascii=False, default=str)))  # as it will read back

    order = list(conversations)
    done = dict(zip(order, run_in_order(order, run_conversation, max_concurrency, commit=commit)))
    bar.close()
    by_id = {(row["kind"], row["id"]): row for rows in done.values() for row, _ in rows}
    return pd.DataFrame([by_id[(item.kind, item.id)] for item in items])


def run_models(models: Sequence[Any], make_agent: Callable[[Any], Any], items: Sequence[EvalItem],
               checkpoint: str | Path | None = None, tag: str = "", progress: bool = True) -> pd.DataFrame:
    """`run_items` for each model of the notebook (`select_llms`) with the agent `make_agent(chat)`
    builds, one model after the other at its own `max_concurrency`, each under its own checkpoint tag
    (the model's tag, then `tag`); the rows of all, `model` first. Each model's wall seconds go to its
    `run_seconds`."""
    parts = []
    for model in models:
        start = time.perf_counter()
        part = run_items(make_agent(model.chat), items, progress=progress, checkpoint=checkpoint,
                         checkpoint_tag=f"{model.tag}|{tag}", max_concurrency=model.max_concurrency)
        model.run_seconds = round(time.perf_counter() - start, 1)
        part.insert(0, "model", model.name)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def run_arms(models: Sequence[Any], make_agent: Callable[[Any], Any], items: Sequence[EvalItem],
             arms: Sequence[str] | str, top_k: int, checkpoint: str | Path | None = None, tag: str = "",
             budget: ContextBudget | None = None, progress: bool = True,
             arm_kinds: Sequence[str] | None = None, ceiling_kinds: Sequence[str] | None = None) -> pd.DataFrame:
    """`run_items` for each model and each arm of `arms` (`arms.parse_arms(arms, [top_k])`), one agent
    per model, each arm under its own checkpoint tag; the rows of all, `model` and `arm` first. The
    ceiling arm runs only the items that have gold calls (`gold_calls_of`). `arm_kinds` (None: every
    kind) limits every arm but the agent as it runs (`routed@top_k`) to the items of those kinds, so
    that a sweep over k costs the single-turn queries only; `ceiling_kinds` (None: as `arm_kinds`) the
    ceiling's (with "rag", every RAG question gets a turn that read its passages: faithfulness rows)."""
    arm_list = parse_arms(arms, [top_k])
    check_arm_kinds(arm_kinds)  # a bad kind fails before any model starts
    check_arm_kinds(ceiling_kinds, "ceiling_kinds")
    parts = []
    for model in models:
        start = time.perf_counter()
        agent = make_agent(model.chat)
        for arm in arm_list:
            chosen = arm_items(arm, items, top_k, arm_kinds, ceiling_kinds)
            if not chosen:
                continue
            part = run_items(agent, chosen, progress=progress, checkpoint=checkpoint,
                             checkpoint_tag=f"{model.tag}|{tag}|arm={arm.name}", max_concurrency=model.max_concurrency,
                             arm=arm, budget=budget_for(model, budget))
            part.insert(0, "arm", part.pop("arm"))
            part.insert(0, "model", model.name)
            parts.append(part)
        model.run_seconds = round(time.perf_counter() - start, 1)
    return pd.concat(parts, ignore_index=True)


ITEM_KINDS = ("scenario", "rag", "query")


def arm_items(arm: Arm, items: Sequence[EvalItem], top_k: int, arm_kinds: Sequence[str] | str | None = None,
              ceiling_kinds: Sequence[str] | str | None = None) -> list[EvalItem]:
    """The items `arm` runs: the ceiling arm only those with gold calls to replay, of `ceiling_kinds`
    (None: as `arm_kinds`); every other arm but the agent as it runs (`routed@top_k`) those of `arm_kinds`
    (None: every kind). Both are 04's parameters (`check_arm_kinds`: a bad kind is a ValueError)."""
    kinds = check_arm_kinds(arm_kinds)
    if arm.kind == "gold_replay" and ceiling_kinds is not None:
        kinds = check_arm_kinds(ceiling_kinds, "ceiling_kinds")
    chosen = [i for i in items if arm.kind != "gold_replay" or gold_calls_of(i) is not None]
    if kinds is not None and arm != Arm(ROUTED, int(top_k)):
        chosen = [i for i in chosen if i.kind in kinds]
    return chosen


def check_arm_kinds(arm_kinds: Sequence[str] | str | None, name: str = "arm_kinds") -> set[str] | None:
    """The `arm_kinds` (or `ceiling_kinds`: `name`) parameter as a set (None: every kind); an unknown kind
    is a ValueError naming the parameter and the kind."""
    if arm_kinds is None:
        return None
    kinds = [arm_kinds] if isinstance(arm_kinds, str) else list(arm_kinds)
    unknown = [k for k in kinds if k not in ITEM_KINDS]
    if unknown or not kinds:
        raise ValueError(f"{name}: {unknown or kinds!r} is not a list of item kinds ({', '.join(ITEM_KINDS)})")
    return set(kinds)


def judge_models(models: Sequence[Any], runs: pd.DataFrame, items: Sequence[EvalItem], per_metric: int | None,
                 metrics: Sequence[str] | None = None, progress: bool = True) -> pd.DataFrame:
    """Each model judges its own rows (`judge_subset(…, per_metric)` of them) at its `max_concurrency`;
    the judgements of all, `model` first (none for the replay stand-in)."""
    parts = []
    for model in models:
        if model.replay:
            continue
        judge = judge_llm(model.config.base_url, model.config.model, model.config.api_key)
        metrics = LLM_METRICS if metrics is None else metrics
        subset = judge_subset(runs[runs["model"] == model.name], items, per_metric, metrics)
        part = score_with_llm(subset, items, judge, metrics=metrics, progress=progress,
                              max_concurrency=model.max_concurrency)
        part.insert(0, "model", model.name)
        parts.append(part)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


# --- conversion to RAGAS --------------------------------------------------------------------------------------

def _result_text(result: Any) -> str:
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
    return text[:MAX_TOOL_TEXT]


def ragas_messages(user: str, tool_log: Iterable[dict[str, Any]], answer: str, with_args: bool = True) -> list:
    """The turn as RAGAS messages: the question, one AI message per tool call followed by its result,
    the answer. `with_args=False` drops arguments (for name-only scoring)."""
    from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage  # heavy (~2 s): only when scoring

    messages: list = [HumanMessage(content=user)]
    for entry in tool_log or []:
        args = entry.get("args") if with_args else {}
        messages.append(AIMessage(content="", tool_calls=[ToolCall(name=entry["name"], args=dict(args or {}))]))
        messages.append(ToolMessage(content=_result_text(entry.get("result"))))
    messages.append(AIMessage(content=answer or ""))
    return messages


def reference_tool_calls(calls: Iterable[tuple[str, dict[str, Any]]], with_args: bool = True) -> list:
    from ragas.messages import ToolCall  # heavy (~2 s): only when scoring

    return [ToolCall(name=name, args=dict(args) if with_args else {}) for name, args in calls]


# --- scoring ------------------------------------------------------------------------------------------------

def _run_async(coro):
    """Run a coroutine to completion from sync code, also inside Jupyter's running event loop."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _value(result: Any) -> float:
    value = getattr(result, "value", result)
    return float(value) if value is not None else math.nan


def _legacy_context_metrics():
    """RAGAS 0.4.3 has the non-LLM context metrics only in the legacy API (collections lacks them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from ragas.metrics import NonLLMContextPrecisionWithReference, NonLLMContextRecall  # heavy (~2 s): only when scoring
    return NonLLMContextPrecisionWithReference(), NonLLMContextRecall()


NON_LLM_METRICS = ["tool_call_accuracy", "tool_call_f1", "tool_name_f1", "fact_presence", "chrf",
                   "context_precision", "context_recall", "rag_tool_called", "answering_tool_called"]


def answering_tool_called(tool_log: Iterable[dict[str, Any]], facts: Sequence[str]) -> bool:
    """Whether some tool of the turn returned the answer: a result that holds every fact (spaces
    ignored), whichever tool it was (a RAG question may also be answered by `product_get`)."""
    wanted = [without_spaces(f) for f in facts if f]
    texts = [without_spaces(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False, default=str))
             for r in (e.get("result") for e in tool_log or [])]
    return bool(wanted) and any(all(f in text for f in wanted) for text in texts)


def score_without_llm(runs: pd.DataFrame, items: Sequence[EvalItem]) -> pd.DataFrame:
    """The non-LLM RAGAS metrics per row of `runs` (NaN where a metric does not apply)."""
    with warnings.catch_warnings():  # RAGAS warns on rows it scores as it defines (kept out of the output)
        warnings.filterwarnings("ignore", message="Reference tool calls are empty")  # a no-call row that called
        warnings.filterwarnings("ignore", message="Length mismatch: predicted tool calls")
        return _run_async(_score_without_llm(runs, {i.id: i for i in items}))


def score_rows(runs: pd.DataFrame, items: Sequence[EvalItem], pack: Any = None) -> pd.DataFrame:
    """`score_without_llm` and `turn_checks` beside each row's keys (`model` when present, kind, id,
    conversation), row for row."""
    keys = runs[[*_models(runs), *_arms(runs), "kind", "id", "conversation"]].reset_index(drop=True)
    return pd.concat([keys, score_without_llm(runs, items).drop(columns=["id"]).reset_index(drop=True),
                      turn_checks(runs, items, pack)], axis=1)


TURN_CHECKS = ["passed", "forbidden", "reasked"]  # 1/0 per scenario turn, NaN on other kinds


def turn_checks(runs: pd.DataFrame, items: Sequence[EvalItem], pack: Any = None) -> pd.DataFrame:
    """Per row of `runs`, the seed's per-turn checks of a scenario turn (NaN and [] on other kinds):
    `forbidden` (1 when the answer holds a phrase of `answer_must_not`, listed in `forbidden_phrases`),
    `reasked` (1 when it asks for a fact the conversation's user turns up to this one gave, listed in
    `reasked_facts`; `pack`: the insurance pack by default) and `passed` (every gold tool name called,
    every fact in the answer ignoring spaces, no forbidden phrase, nothing asked again, no error)."""
    by_id = {i.id: i for i in items}
    users: dict[str, list[str]] = {}
    so_far: dict[str, list[str]] = {}
    for item in items:
        if item.kind == "scenario":
            users.setdefault(item.conversation, []).append(item.user)
            so_far[item.id] = list(users[item.conversation])
    if so_far and pack is None:
        pack = load_pack("insurance")
    known = {i: known_context(turns, pack) for i, turns in so_far.items()}
    rows = []
    for run in runs.to_dict("records"):
        item = by_id[run["id"]]
        if item.kind != "scenario":
            rows.append({**{c: math.nan for c in TURN_CHECKS}, "forbidden_phrases": [], "reasked_facts": []})
            continue
        answer = str(run.get("answer") or "")
        bad = forbidden_phrases(item.answer_must_not, answer)
        again = reasked_facts(answer, known[item.id], pack)
        tools_ok = {name for name, _ in item.reference_calls} <= set(_names(run.get("called_tools")))
        facts_ok = all(fact_in(fact, answer) for fact in item.facts)
        error = str(run.get("error") or "") != ""
        rows.append({"passed": float(tools_ok and facts_ok and not bad and not again and not error),
                     "forbidden": float(bool(bad)), "reasked": float(bool(again)),
                     "forbidden_phrases": bad, "reasked_facts": again})
    return pd.DataFrame(rows, columns=[*TURN_CHECKS, "forbidden_phrases", "reasked_facts"])


def _names(called: Any) -> list[str]:
    """A row's called tools: a list, or its JSON text (rows read back from a CSV)."""
    return json.loads(called) if isinstance(called, str) else list(called or [])


def check_counts(part: pd.DataFrame) -> dict[str, Any]:
    """The turn checks of some scored rows: `pass_rate` with `passed` of `n_pass_rate` turns, and the
    turns that failed `forbidden` and `reasked` ({} when the rows carry no checks)."""
    if "passed" not in part.columns:
        return {}
    values = {c: pd.to_numeric(part[c], errors="coerce") for c in TURN_CHECKS}
    n = int(values["passed"].notna().sum())
    return {"pass_rate": values["passed"].mean() if n else math.nan, "passed": int(values["passed"].sum()),
            "n_pass_rate": n, "forbidden_turns": int(values["forbidden"].sum()),
            "reasked_turns": int(values["reasked"].sum())}


def merge_judged(scores: pd.DataFrame, judged: pd.DataFrame | None, metrics: Sequence[str]) -> pd.DataFrame:
    """The judged metrics added to `scores` (NaN on rows not judged), matched on model and id."""
    if judged is None or judged.empty:
        return scores
    on = [*_models(scores), *[c for c in _arms(scores) if c in judged.columns], "id"]
    return scores.merge(judged[[*on, *[m for m in metrics if m in judged.columns]]], on=on, how="left")


async def _score_without_llm(runs: pd.DataFrame, items: dict[str, EvalItem]) -> pd.DataFrame:
    from ragas.dataset_schema import SingleTurnSample  # heavy (~2 s): only when scoring
    from ragas.metrics.collections import CHRFScore, StringPresence, ToolCallAccuracy, ToolCallF1  # heavy (~2 s): only when scoring

    accuracy, f1, presence, chrf = ToolCallAccuracy(), ToolCallF1(), StringPresence(), CHRFScore()
    precision, recall = _legacy_context_metrics()
    rows = []
    for _, run in runs.iterrows():
        item = items[run["id"]]
        row = {"id": run["id"], **{m: math.nan for m in NON_LLM_METRICS}}
        named = ragas_messages(run["user"], run["tool_log"], run["answer"], with_args=False)
        if not item.reference_calls and not run["tool_log"]:
            row["tool_name_f1"] = 1.0  # a correct no-call (RAGAS' F1 of two empty sets is 0)
        else:
            row["tool_name_f1"] = _value(await f1.ascore(
                user_input=named, reference_tool_calls=reference_tool_calls(item.reference_calls, False)))
        if item.with_args:
            full = ragas_messages(run["user"], run["tool_log"], run["answer"])
            ref = reference_tool_calls(item.reference_calls)
            row["tool_call_accuracy"] = _value(await accuracy.ascore(user_input=full, reference_tool_calls=ref))
            row["tool_call_f1"] = _value(await f1.ascore(user_input=full, reference_tool_calls=ref))
        if item.facts:
            found = [_value(await presence.ascore(reference=fact, response=run["answer"])) for fact in item.facts]
            row["fact_presence"] = sum(found) / len(found)
            row["chrf"] = _value(await chrf.ascore(reference=" ".join(item.facts), response=run["answer"] or " "))
        if item.kind == "rag":  # measured two ways: the RAG tool of its collection, and any tool that answers it
            row["rag_tool_called"] = float(any(e.get("name") == item.reference_calls[0][0] for e in run["tool_log"] or []))
            row["answering_tool_called"] = float(answering_tool_called(run["tool_log"], item.facts))
        contexts = list(run["retrieved_contexts"])
        if contexts and item.reference_contexts:
            sample = SingleTurnSample(retrieved_contexts=contexts, reference_contexts=item.reference_contexts)
            row["context_precision"] = float(await precision.single_turn_ascore(sample))
            row["context_recall"] = float(await recall.single_turn_ascore(sample))
        elif item.reference_contexts:  # a RAG question where the agent retrieved nothing
            row["context_precision"], row["context_recall"] = 0.0, 0.0
        rows.append(row)
    return pd.DataFrame(rows, columns=["id", *NON_LLM_METRICS])


LLM_METRICS = ["faithfulness", "answer_relevancy", "agent_goal_accuracy"]


class RagasEmbeddings:
    """Our embedder (e5-small by default) behind RAGAS' embedding interface, for AnswerRelevancy."""

    def __new__(cls, embedder: Any = None):
        from ragas.embeddings.base import BaseRagasEmbedding  # heavy (~2 s): only when scoring


        inner = embedder or get_embedder()

        class _Adapter(BaseRagasEmbedding):
            def embed_text(self, text: str, **kwargs) -> list[float]:
                return [float(x) for x in inner.embed_queries([text])[0]]

            async def aembed_text(self, text: str, **kwargs) -> list[float]:
                return self.embed_text(text)

        return _Adapter()


def judge_llm(base_url: str, model: str, api_key: str = "local", timeout: float = 300.0, max_tokens: int = 1024,
              retries: int | None = None):
    """A RAGAS LLM (instructor over an OpenAI-compatible server) for the judged metrics; 429 and 5xx
    answers are retried with back-off like the agent's (`toolroute.llm.retry`), timeouts are not."""
    from openai import AsyncOpenAI  # only with an LLM judge
    from ragas.llms import llm_factory  # heavy (~2 s): only when scoring

    retries = llm_limits().retries if retries is None else retries
    client = AsyncOpenAI(base_url=base_url, api_key=api_key or "local", timeout=timeout, max_retries=0,
                         http_client=httpx.AsyncClient(transport=AsyncRetryOnBusy(retries), timeout=timeout))
    return llm_factory(model, client=client, temperature=0.0, max_tokens=max_tokens)


def score_with_llm(runs: pd.DataFrame, items: Sequence[EvalItem], llm: Any, embeddings: Any = None,
                   metrics: Sequence[str] = tuple(LLM_METRICS), progress: bool = True,
                   max_concurrency: int = 1) -> pd.DataFrame:
    """The judged metrics per row; columns `<metric>` (NaN when not applicable or failed) and
    `<metric>_status` ("ok", "n/a", or "failed: <reason>"). `max_concurrency` rows are judged at
    once; the rows keep the order of `runs`."""
    unknown = sorted(set(metrics) - set(LLM_METRICS))
    if unknown:
        raise ValueError(f"llm_metrics: unknown metric(s) {unknown}; known: {LLM_METRICS}")
    check_concurrency(max_concurrency)
    return _run_async(_score_with_llm(runs, {i.id: i for i in items}, llm, embeddings, list(metrics), progress,
                                      max_concurrency))


async def _score_with_llm(runs, items, llm, embeddings, metrics, progress, max_concurrency=1) -> pd.DataFrame:
    from ragas.metrics.collections import AgentGoalAccuracyWithReference, AnswerRelevancy, Faithfulness  # heavy (~2 s): only when scoring

    scorers: dict[str, Callable] = {}
    if "faithfulness" in metrics:
        faith = Faithfulness(llm=llm)
        scorers["faithfulness"] = lambda run, item: (
            faith.ascore(user_input=run["user"], response=run["answer"], retrieved_contexts=list(run["retrieved_contexts"]))
            if run["answer"] and len(run["retrieved_contexts"]) else None)
    if "answer_relevancy" in metrics:
        relevancy = AnswerRelevancy(llm=llm, embeddings=embeddings if embeddings is not None else RagasEmbeddings())
        scorers["answer_relevancy"] = lambda run, item: (
            relevancy.ascore(user_input=run["user"], response=run["answer"]) if run["answer"] else None)
    if "agent_goal_accuracy" in metrics:
        goal = AgentGoalAccuracyWithReference(llm=llm)
        scorers["agent_goal_accuracy"] = lambda run, item: (
            goal.ascore(user_input=ragas_messages(run["user"], run["tool_log"], run["answer"]),
                        reference=item.reference_text) if item.kind == "scenario" else None)
    bar = tqdm(total=len(runs) * len(scorers), desc="LLM judgements", disable=not progress)
    slots = asyncio.Semaphore(max_concurrency)

    async def judge(run) -> dict[str, Any]:
        item = items[run["id"]]
        row: dict[str, Any] = {"id": run["id"], **({"arm": run["arm"]} if "arm" in run.index else {})}
        async with slots:
            sampled = run["judge_metrics"] if "judge_metrics" in run.index else list(scorers)
            for name, make in scorers.items():
                if name not in sampled:
                    row[name], row[f"{name}_status"] = math.nan, "not sampled"
                    bar.update(1)
                    continue
                coro = make(run, item)
                if coro is None:
                    row[name], row[f"{name}_status"] = math.nan, "n/a"
                else:
                    try:
                        row[name], row[f"{name}_status"] = _value(await coro), "ok"
                    except Exception as exc:  # noqa: BLE001 - a failed judgement is counted, not hidden
                        row[name], row[f"{name}_status"] = math.nan, f"failed: {type(exc).__name__}: {str(exc)[:200]}"
                bar.update(1)
        return row

    rows = await asyncio.gather(*(judge(run) for _, run in runs.iterrows()))  # in the order of `runs`
    bar.close()
    return pd.DataFrame(rows)


# --- tables -------------------------------------------------------------------------------------------------

def judge_failures(judged: pd.DataFrame) -> pd.DataFrame:
    """Per judged metric: attempted, ok, failed, not applicable."""
    rows = []
    groups = judged.groupby("model", sort=False) if "model" in judged.columns else [(None, judged)]
    for model, part in groups:
        for col in [c for c in judged.columns if c.endswith("_status")]:
            status = part[col].astype(str)
            rows.append({**({"model": model} if model is not None else {}), "metric": col[: -len("_status")],
                         "attempted": int((~status.isin(["n/a", "not sampled"])).sum()), "ok": int((status == "ok").sum()),
                         "failed": int(status.str.startswith("failed").sum()),
                         "not_applicable": int((status == "n/a").sum()),
                         "not_sampled": int((status == "not sampled").sum())})
    return pd.DataFrame(rows, columns=[*_models(judged), "metric", "attempted", "ok", "failed", "not_applicable",
                                       "not_sampled"])


def metric_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in NON_LLM_METRICS + LLM_METRICS if c in frame.columns]


def _models(frame: pd.DataFrame) -> list[str]:
    """["model"] when the rows carry the model that produced them (runs of the `llms` list), else []."""
    return ["model"] if "model" in frame.columns else []


def _arms(frame: pd.DataFrame) -> list[str]:
    """["arm"] when the rows come from arms (`run_arms`), else []."""
    return ["arm"] if "arm" in frame.columns else []


def summary_by_kind(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean of every metric per kind (per model, arm and kind when `scores` has those columns), with n
    (rows where the metric applied) in its own column; with the turn checks, `check_counts` too (NaN and
    0 on the kinds without scenario turns)."""
    rows = []
    by = [*_models(scores), *_arms(scores), "kind"]
    for keys, group in scores.groupby(by, sort=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        row: dict[str, Any] = {**dict(zip(by, keys)), "turns": len(group)}
        for m in metric_columns(scores):
            values = pd.to_numeric(group[m], errors="coerce")
            row[m] = values.mean() if values.notna().any() else math.nan
            row[f"n_{m}"] = int(values.notna().sum())
        row.update(check_counts(group))
        rows.append(row)
    return pd.DataFrame(rows)


def summary_by_conversation(scores: pd.DataFrame) -> pd.DataFrame:
    """Per scenario (conversation): mean of each metric over its turns; with the turn checks, the turns
    passed, the pass rate and the turns with a forbidden phrase and with a fact asked again."""
    part = scores[scores["kind"] == "scenario"]
    if part.empty:
        return pd.DataFrame()
    cols = metric_columns(part)
    by = [*_models(part), *_arms(part), "conversation"]
    table = part.groupby(by, sort=True)[cols].mean(numeric_only=True)
    table.insert(0, "turns", part.groupby(by).size())
    table = table.reset_index()
    if "passed" not in part.columns:
        return table
    checks = pd.DataFrame([{**dict(zip(by, keys if isinstance(keys, tuple) else (keys,))), **check_counts(group)}
                           for keys, group in part.groupby(by, sort=True)]).drop(columns=["n_pass_rate"])
    return table.merge(checks, on=by, how="left")


def findings(scores: pd.DataFrame, runs: pd.DataFrame, judged: pd.DataFrame | None = None) -> list[str]:
    """Markdown lines with the headline numbers per kind, computed from the tables."""
    for column, label in (("model", "Model"), ("arm", "Arm")):  # one heading per model, then per arm
        if column in scores.columns and scores[column].nunique() > 1:
            lines = []
            for value, part in scores.groupby(column, sort=False):
                mine = runs[runs[column] == value] if column in runs.columns else runs
                theirs = judged[judged[column] == value] if judged is not None and column in judged.columns else judged
                lines += [f"**{label} {value}**", *findings(part.drop(columns=[column]), mine, theirs)]
            return lines
        scores = scores.drop(columns=[column], errors="ignore")
    lines = []
    table = summary_by_kind(scores).set_index("kind")
    for kind in [k for k in KINDS if k in table.index]:
        row = table.loc[kind]
        parts = [f"{m} {row[m]:.3f} (n={int(row[f'n_{m}'])})" for m in metric_columns(scores)
                 if f"n_{m}" in row and row[f"n_{m}"] > 0]
        if row.get("n_pass_rate", 0) > 0:
            parts.append(f"pass rate {row['pass_rate']:.3f} ({int(row['passed'])} of {int(row['n_pass_rate'])} turns; "
                         f"a forbidden phrase in {int(row['forbidden_turns'])}, a known fact asked again in "
                         f"{int(row['reasked_turns'])})")
        lines.append(f"- **{kind}** ({int(row['turns'])} turns): " + ", ".join(parts) + ".")
    errors = int((runs["error"].astype(str) != "").sum())
    no_answer = int((runs["answer"].astype(str).str.strip() == "").sum())
    lines.append(f"- Agent: {errors} turn(s) ended in an error, {no_answer} without an answer; median "
                 f"{runs['prompt_tokens'].median():.0f} prompt tokens and {runs['seconds'].median():.1f} s per turn.")
    if judged is not None and len(judged):
        fails = judge_failures(judged)
        lines.append("- Judge: " + ", ".join(f"{r.metric} {r.ok}/{r.attempted} parsed ({r.failed} failed)"
                                             for r in fails.itertuples()) + ".")
    else:
        lines.append("- No judge ran: faithfulness, answer relevancy and goal accuracy are not reported.")
    return lines


ARM_RATES = ["completion", "tools_ok", "facts_ok"]
ARM_MEANS = ["tool_call_accuracy", "tool_name_f1", "fact_presence", "prompt_tokens", "total_tokens", "seconds"]


def arm_summary(scores: pd.DataFrame, runs: pd.DataFrame, items: Sequence[EvalItem]) -> pd.DataFrame:
    """Per arm and kind (and model), plus every kind pooled ("all"): completion (every gold tool name
    called, or none for a no-call row; every fact in the answer; no error), tools_ok, facts_ok (rows with
    facts) as rates with 95% Wilson intervals (a turn over the context counts as failed); tool-call
    accuracy, name-only tool F1, fact presence, prompt and total tokens and seconds as means with
    95% bootstrap intervals (tokens and seconds over the turns that were sent)."""
    by_id = {i.id: i for i in items}
    keys = [*_models(runs), *_arms(runs), "id"]
    merged = runs.merge(scores[[*keys, *[m for m in ARM_MEANS if m in scores.columns]]], on=keys, how="left")
    over = merged["over_context"].astype(bool) if "over_context" in merged.columns else pd.Series(False, index=merged.index)
    gold = merged["id"].map(lambda i: {name for name, _ in by_id[i].reference_calls})
    called = merged["called_tools"].map(set)
    tools_ok = [(g <= c) if g else not c for g, c in zip(gold, called)]
    facts = merged["id"].map(lambda i: list(by_id[i].facts))
    facts_ok = [float(all(without_spaces(f) in without_spaces(a) for f in fs)) if fs else math.nan
                for fs, a in zip(facts, merged["answer"].fillna("").astype(str))]
    error = merged["error"].fillna("").astype(str) != ""
    sent = ~over
    f = merged.assign(tools_ok=[float(t) for t in tools_ok], facts_ok=facts_ok,
                      completion=[float(t and (fo != 0) and not e) for t, fo, e in zip(tools_ok, facts_ok, error)],
                      total_tokens=(pd.to_numeric(merged["prompt_tokens"], errors="coerce")
                                    + pd.to_numeric(merged["completion_tokens"], errors="coerce")),
                      over_context=over)
    for mean in ("prompt_tokens", "total_tokens", "seconds"):
        f[mean] = pd.to_numeric(f[mean], errors="coerce").where(sent)
    for mean in ARM_MEANS:
        if mean not in f.columns:
            f[mean] = math.nan
    if "arm" not in f.columns:
        f["arm"] = "routed"
    by = [*_models(f), "arm", "kind"]
    pooled = f.assign(kind="all")
    table = arm_table(pd.concat([f, pooled], ignore_index=True), by, ARM_RATES, ARM_MEANS)
    counts = pd.concat([f, pooled]).groupby(by, sort=False)["over_context"].sum().reset_index()
    table = table.merge(counts, on=by, how="left")
    return table[[*by, "runs", "over_context", *[c for c in table.columns if c not in {*by, "runs", "over_context"}]]]


