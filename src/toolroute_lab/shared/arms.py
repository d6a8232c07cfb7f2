"""The one vocabulary of agent arms (03, 04, the option-arm study and the benchmarks): router error and model error apart.

Each arm decides which tools the LLM sees in a turn, the rest of the agent (guardrails, rewriter, tools,
cap, output guard) being the same:

- `routed@k`: the router's top-k (the agent as it runs; `routed` in `arms` means every k of `top_ks`);
- `oracle`: exactly the turn's gold tools bound, no routing (a perfect router): what is lost here is the model's;
- `all_tools`: every tool of the pack bound (compact schemas), no routing, where the prompt fits the
  context: a turn whose first prompt would not fit is not sent and is recorded `over_context` (the
  embedded model's 8,192 tokens hold about 12,450 for the 54 insurance tools: those runs are all recorded so);
- `gold_replay`: the gold calls run with the real tools (no LLM picks them) and the LLM, with no tool bound,
  writes only the answer from their results: the answer-writing ceiling.

The fixed lists are `BINDINGS` (name -> tools, words); agent options as arms (the same agent with one
`AgentConfig` option changed: `constrained`, `lines`, `grounded`, joined by "+") are `OPTIONS`.

`ask_arm` runs one turn under an arm through `Agent.ask` (`tools=` / `gold_calls=`); `arm_table` gives the
per-arm rates with Wilson intervals and the per-arm means (tool recall, tokens, seconds) with seeded
percentile-bootstrap intervals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from toolroute.evaluation.metrics import wilson_interval

ROUTED = "routed"
CEILING = "gold_replay"
"""The answer-writing ceiling: its runs are complete by construction where the context allows."""
NOT_ROUTED = 0  # the `top_k` of a row whose arm binds its tools without the router


@dataclass(frozen=True)
class Binding:
    """An arm that binds a fixed tool list in place of the router's top-k: the list for a turn
    (`tools(gold_tools, agent)`), and the arm in a sentence's and in a panel title's words."""

    tools: Callable[[Sequence[str], Any], list[str]]
    description: str
    title: str


def oracle_with_confusers(gold_tools: Sequence[str], agent: Any) -> list[str]:
    """The gold tools and every look-alike of theirs: the tools their cards' when_not_to_use lines name
    ("… → other_tool") and the tools whose cards name them. Sorted by name, so that the gold tool is not
    always first."""
    catalog = agent.router.catalog
    bound = set(gold_tools)
    for tool in gold_tools:
        card = catalog.cards.get(tool)
        bound |= set(card.confusions() if card else ())
        bound |= {other.name for other in catalog if tool in other.confusions()}
    return sorted(t for t in bound if t in catalog.cards or t in gold_tools)


# The arms that bind a fixed list, in reading order. A new one is an entry here (or `register_binding`):
# 03 and 04 accept its name in `arms`, and their tables, figures and the report describe it.
BINDINGS: dict[str, Binding] = {
    "oracle": Binding(lambda gold, agent: list(dict.fromkeys(gold)), "the gold tools bound by an oracle router",
                      "oracle router: the gold tools bound"),
    "all_tools": Binding(lambda gold, agent: list(agent.pack.tool_names), "every tool bound", "every tool bound"),
    "oracle_confusers": Binding(oracle_with_confusers, "the gold tools and their look-alikes bound",
                                "gold tools + look-alikes bound"),
}
CEILING_WORDS = ("the gold calls replayed and only the answer written by the model",
                 "ceiling: gold calls replayed, the model writes the answer")

# Agent options as arms (`toolroute_lab.studies.option_arms`): a name -> the `AgentConfig` fields it changes.
# An option arm is one name or several joined by "+" ("constrained+lines"); "baseline" changes nothing.
OPTIONS: dict[str, dict[str, Any]] = {
    "constrained": {"constrained_calls": True},
    "lines": {"tool_result_format": "lines"},
    "grounded": {"retry_ungrounded": True},
}
BASELINE = "baseline"


def register_binding(name: str, binding: Binding) -> None:
    """Add an arm that binds a fixed list (a study's, or a test's) without editing `BINDINGS`."""
    if name in (ROUTED, CEILING):
        raise ValueError(f"{name!r} is an arm already")
    BINDINGS[name] = binding


def kinds() -> tuple[str, ...]:
    """Every kind of arm, in reading order: the router's top-k, the fixed lists, the ceiling."""
    return (ROUTED, *BINDINGS, CEILING)


def routed_name(top_k: int) -> str:
    """The name of the arm of the router's top-k (`routed@5`): the agent as it runs."""
    return f"{ROUTED}@{int(top_k)}"


def option_changes(name: str) -> dict[str, Any]:
    """The `AgentConfig` fields an option arm changes ("baseline": none); an unknown option is a ValueError."""
    if name == BASELINE:
        return {}
    changes: dict[str, Any] = {}
    for part in name.split("+"):
        if part not in OPTIONS:
            raise ValueError(f"arms: unknown option {part!r} in {name!r}; known: {BASELINE}, {', '.join(OPTIONS)} "
                             "(several joined by +)")
        changes.update(OPTIONS[part])
    return changes


@dataclass(frozen=True)
class Arm:
    """One arm: `kind` (one of `kinds()`) and, for a routed arm, its `top_k`."""

    kind: str
    top_k: int = NOT_ROUTED

    @property
    def name(self) -> str:
        return routed_name(self.top_k) if self.routed else self.kind

    @property
    def routed(self) -> bool:
        return self.kind == ROUTED

    @property
    def binding(self) -> Binding | None:
        return BINDINGS.get(self.kind)


def parse_arms(arms: Sequence[str] | str | None, top_ks: Sequence[int]) -> list[Arm]:
    """The arms of the `arms` parameter, in the order given: "routed" (one arm per k of `top_ks`),
    "routed@k", a fixed list ("oracle", "all_tools"), "gold_replay". A bad entry is a ValueError naming `arms`."""
    if arms is None:
        return [Arm(ROUTED, int(k)) for k in top_ks]
    if isinstance(arms, str):
        arms = [arms]
    out: list[Arm] = []
    for entry in list(arms):
        text = str(entry).strip()
        if text == ROUTED:
            out += [Arm(ROUTED, int(k)) for k in top_ks]
        elif text.startswith(f"{ROUTED}@"):
            k = text.split("@", 1)[1]
            if not k.isdigit() or int(k) < 1:
                raise ValueError(f"arms: {entry!r}: the top-k after @ must be a whole number >= 1")
            out.append(Arm(ROUTED, int(k)))
        elif text in kinds():
            out.append(Arm(text))
        else:
            raise ValueError(f"arms: unknown arm {entry!r}; known: {ROUTED}, {ROUTED}@<k>, {', '.join(kinds()[1:])}")
    if not out:
        raise ValueError("arms: give at least one arm (or None for the routed top-ks only)")
    names = [a.name for a in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"arms: {twice} listed twice")
    return out


def describe(name: str) -> str:
    """An arm in a sentence's words ("the router's top 5", "the gold tools bound by an oracle router")."""
    return _arm_words(name, 0)


def title(name: str) -> str:
    """An arm as a figure panel's title."""
    return _arm_words(name, 1)


def _arm_words(name: str, which: int) -> str:
    if name.startswith(f"{ROUTED}@"):
        return f"the router's top {name.split('@', 1)[1]}"
    if name == CEILING:
        return CEILING_WORDS[which]
    binding = BINDINGS.get(name)
    return (binding.description, binding.title)[which] if binding else name


def arm_order(names: Sequence[str]) -> list[str]:
    """Arm names in reading order: routed by k, then the fixed lists, the ceiling."""
    order = kinds()

    def key(name: str) -> tuple[int, int]:
        kind, _, k = name.partition("@")
        return (order.index(kind) if kind in order else len(order), int(k) if k.isdigit() else 0)
    return sorted(dict.fromkeys(names), key=key)


# --- the context budget ------------------------------------------------------------------------------------------

@dataclass
class ContextBudget:
    """Whether a turn's first prompt (system prompt, question, bound schemas) leaves `reserve` tokens of
    `limit` for the reply. `count(messages, schemas)` counts a prompt: for the embedded model its own
    tokenizer and chat template (`toolroute.llm.tokens.PromptCounter().count`). Later prompts of the turn
    also carry tool results: a turn that overflows there fails at the server and keeps that error."""

    limit: int
    count: Callable[[list[dict[str, Any]], list[dict]], int]
    reserve: int = 512

    def check(self, system: str, question: str, schemas: list[dict]) -> tuple[int, bool]:
        tokens = int(self.count([{"role": "system", "content": system}, {"role": "user", "content": question}], schemas))
        return tokens, tokens + self.reserve <= self.limit


def embedded_budget(arms: Sequence[Arm], limit: int | None, reserve: int = 512) -> ContextBudget | None:
    """The budget of the embedded model's context (`limit` tokens, None: no check), counted with its own
    tokenizer and chat template; None too when no arm binds a fixed tool list (nothing to check)."""
    if limit is None or not any(a.binding for a in arms):
        return None
    from toolroute.llm.tokens import PromptCounter  # loads the GGUF's vocabulary (~1 s): only when an arm needs the check

    return ContextBudget(limit=int(limit), count=PromptCounter().count, reserve=reserve)


def budget_for(model: Any, budget: ContextBudget | None) -> ContextBudget | None:
    """`budget` (the embedded model's context) for the embedded model, None for an OpenAI-compatible endpoint:
    its context is not the embedded one's, so all its arms are sent and a prompt it cannot take comes back
    as that turn's error. A model whose config is unknown (the replay stand-in) keeps the budget."""
    config = getattr(model, "config", None)
    return None if config is not None and not getattr(config, "embedded", True) else budget


def over_context_error(tokens: int, budget: ContextBudget) -> str:
    return (f"over context: the first prompt has {tokens} tokens, {budget.limit} - {budget.reserve} "
            "(reply) allowed; not sent")


# --- one turn under an arm -------------------------------------------------------------------------------------

def bound_tools(arm: Arm, gold_tools: Sequence[str], agent: Any) -> list[str] | None:
    """The tools an arm binds (None: the router's top-k, or none for the ceiling)."""
    return arm.binding.tools(gold_tools, agent) if arm.binding else None


def ask_arm(agent: Any, arm: Arm, question: str, thread: str, *, gold_tools: Sequence[str] = (),
            gold_calls: Sequence[tuple[str, dict]] | None = None, max_tool_steps: int | None = None,
            budget: ContextBudget | None = None) -> tuple[dict[str, Any], str, bool]:
    """One turn of `agent` under `arm`: (final state, error text, over_context). The ceiling arm needs
    `gold_calls`; an arm binding a fixed tool list is first checked against `budget` (when given)."""
    knobs: dict[str, Any] = {"max_tool_steps": max_tool_steps}
    if arm.routed:
        knobs["top_k"] = arm.top_k
    elif arm.kind == CEILING:
        if gold_calls is None:
            raise ValueError("gold_replay: this turn has no gold calls with arguments")
        knobs["gold_calls"] = list(gold_calls)
    else:
        tools = bound_tools(arm, gold_tools, agent)
        if budget is not None and tools:
            tokens, fits = budget.check(agent.pack.system_prompt, question, [agent.schema(n) for n in tools])
            if not fits:
                return {"routed": tools, "prompt_tokens": 0}, over_context_error(tokens, budget), True
        knobs["tools"] = tools
    try:
        return dict(agent.ask(question, thread, **knobs)), "", False
    except Exception as exc:  # noqa: BLE001 - one failing turn must not lose the run
        return {}, f"{type(exc).__name__}: {exc}", False


# --- tables with intervals ----------------------------------------------------------------------------------------

def _bootstrap(values: np.ndarray, n_boot: int, seed: int) -> tuple[float, float]:
    if len(values) == 0:
        return np.nan, np.nan
    if len(values) == 1 or np.all(values == values[0]):
        return float(values[0]), float(values[0])
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(n_boot, len(values)))].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def arm_table(frame: pd.DataFrame, by: Sequence[str], rates: Sequence[str], means: Sequence[str],
              n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per group of `by`: `runs`; per rate column (0/1 values, NaN = not applicable) its count of
    successes, the rate and its 95% Wilson interval (`<rate>_lo`, `<rate>_hi`, `n_<rate>` rows where it
    applied); per mean column the mean and a seeded 95% percentile-bootstrap interval. Arms in reading order."""
    rows = []
    for keys, group in frame.groupby(list(by), sort=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        row: dict[str, Any] = {**dict(zip(by, keys)), "runs": len(group)}
        for rate in rates:
            values = pd.to_numeric(group[rate], errors="coerce").dropna().astype(float)
            k, n = int(values.sum()), len(values)
            lo, hi = wilson_interval(k, n)
            count = "completed" if rate == "completion" else f"{rate}_count"
            row.update({count: k, rate: k / n if n else np.nan, f"{rate}_lo": lo, f"{rate}_hi": hi, f"n_{rate}": n})
        for mean in means:
            values = pd.to_numeric(group[mean], errors="coerce").dropna().to_numpy(dtype=float)
            lo, hi = _bootstrap(values, n_boot, seed)
            row.update({mean: float(values.mean()) if len(values) else np.nan, f"{mean}_lo": lo, f"{mean}_hi": hi})
        rows.append(row)
    table = pd.DataFrame(rows)
    if table.empty or "arm" not in by:
        return table
    order = {name: i for i, name in enumerate(arm_order(list(table["arm"])))}
    sort = [c for c in by if c != "arm"]
    lead = [c for c in sort if c == "model"]
    table = table.assign(_arm=table["arm"].map(order)).sort_values([*lead, "_arm", *[c for c in sort if c not in lead]],
                                                                    kind="stable")
    return table.drop(columns="_arm").reset_index(drop=True)
