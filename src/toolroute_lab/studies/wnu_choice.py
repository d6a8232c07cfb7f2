"""when_not_to_use where the seed says it acts: in the LLM's choice among the routed tools (issue 39, item 1b).

Seed 002 keeps `when_not_to_use` out of the embedding and appends it to the bound tools' descriptions,
so that the model choosing among look-alike tools reads "쓰지 말 때: … → other_tool". The agent does that
by default (`AgentConfig.append_when_not_to_use`); this study turns it off and on with everything else
the same (router, model, prompt, cap), on the call rows of a query split, under three binds:

- `routed@3`, `routed@5`: the router's top k (the agent as it runs);
- `oracle_confusers`: the gold tools plus every tool their cards and the cards pointing at them name as
  a look-alike (`toolroute_lab.shared.arms.BINDINGS`): the choice the field is written for, with the
  right tool always present.

The outcome is the model's tool choice: its first call names a gold tool (`chose_gold`). Per bind and
subset (every call row, the confusion-pair rows) `choice_table` pairs the two settings on the same rows:
the rates, the rows only one side got right, the exact McNemar p, Holm over the table, and the power of
that test to detect a 10-point difference at the observed discordance (`mcnemar_power`).

Run: `python -m toolroute_lab.studies.wnu_choice --split test [--kinds confusion] [--limit N]`
(writes `results/wnu_choice_runs.csv` and `results/wnu_choice.csv`; rows already run are kept in
`results/wnu_choice.partial.jsonl` and not run again).
"""

from __future__ import annotations

import argparse
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd
from tqdm.auto import tqdm

from toolroute.evaluation.metrics import holm_adjusted, mcnemar_exact
from toolroute_lab.shared.arms import ask_arm, parse_arms
from toolroute_lab.shared.checkpoint import RowCheckpoint

BINDS = ("routed@3", "routed@5", "oracle_confusers")
SETTINGS = (True, False)  # append_when_not_to_use: the agent's default first
DIFFERENCE = 0.10  # the difference whose detection power `choice_table` states
AgentMaker = Callable[[bool], Any]  # append_when_not_to_use -> a toolroute.agent.Agent


def run_choices(make_agent: AgentMaker, queries: Sequence[Any], binds: Sequence[str] = BINDS, cap: int = 1,
                checkpoint: str | Path | None = None, tag: str = "", progress: bool = True,
                deadline: float | None = None) -> pd.DataFrame:
    """Every call row under every bind, with `when_not_to_use` in the descriptions and without, one row
    each: which tools were bound and which tool the model called first. Interleaved per query (both
    settings and every bind before the next query), so a run stopped at `deadline` stays paired."""
    arms = parse_arms(list(binds), [5])
    saved = RowCheckpoint(checkpoint, ["id", "bind", "wnu"], tag)
    agents: dict[bool, Any] = {}
    rows = []
    calls = [q for q in queries if q.expected_tools]
    for query in tqdm(calls, desc="wnu choice", disable=not progress):
        if deadline is not None and time.monotonic() > deadline:
            break
        for arm in arms:
            for wnu in SETTINGS:
                row = saved.get(id=query.id, bind=arm.name, wnu=wnu)
                if row is None:
                    agent = agents.get(wnu) or agents.setdefault(wnu, make_agent(wnu))
                    state, error, _ = ask_arm(agent, arm, query.query, f"wnu-{query.id}-{uuid.uuid4().hex[:8]}",
                                              gold_tools=query.expected_tools, max_tool_steps=cap)
                    called = [entry["name"] for entry in state.get("tool_log", []) or []]
                    row = {"id": query.id, "kind": query.kind, "bind": arm.name, "wnu": wnu,
                           "expected": list(query.expected_tools), "bound": list(state.get("routed", []) or []),
                           "first_call": called[0] if called else "",
                           "chose_gold": float(bool(called) and called[0] in query.expected_tools),
                           "gold_bound": float(set(query.expected_tools) <= set(state.get("routed", []) or [])),
                           "seconds": state.get("seconds", 0.0), "error": error or (state.get("error") or "")}
                    saved.add(row)
                rows.append(row)
    return pd.DataFrame(rows)


def mcnemar_power(n: int, discordance: float, difference: float = DIFFERENCE, alpha: float = 0.05) -> float:
    """The power of the exact two-sided McNemar test on `n` paired rows to detect `difference` between
    the two rates, when a share `discordance` of the rows differ between the settings (at least the
    difference itself): the discordant count is binomial, and among them the better side's share is
    (discordance + difference) / (2 discordance)."""
    from scipy.stats import binom, binomtest  # only for the power statement

    discordance = min(1.0, max(discordance, difference))
    share = (discordance + difference) / (2 * discordance)
    power = 0.0
    for d in range(1, n + 1):
        weight = binom.pmf(d, n, discordance)
        if weight < 1e-12:
            continue
        rejected = sum(binom.pmf(k, d, share) for k in range(d + 1)
                       if binomtest(k, d, 0.5).pvalue < alpha)
        power += weight * rejected
    return float(power)


def choice_table(runs: pd.DataFrame, subsets: dict[str, Callable[[pd.DataFrame], pd.DataFrame]] | None = None,
                 difference: float = DIFFERENCE) -> pd.DataFrame:
    """Per bind and subset: n paired rows, the choice rate with and without `when_not_to_use`, the rows
    only one setting got right, the exact McNemar p (Holm over the whole table: one family), and the power
    to detect `difference` at the observed discordance."""
    subsets = subsets or {"all call rows": lambda f: f, "confusion-pair rows": lambda f: f[f["kind"] == "confusion"]}
    records = []
    for bind in dict.fromkeys(runs["bind"]):
        for subset, pick in subsets.items():
            part = pick(runs[runs["bind"] == bind])
            wide = part.pivot_table(index="id", columns="wnu", values="chose_gold", aggfunc="first").dropna()
            if wide.empty or True not in wide.columns or False not in wide.columns:
                continue
            with_, without = wide[True].tolist(), wide[False].tolist()
            exact = mcnemar_exact(without, with_)
            n = exact["n"]
            records.append({"bind": bind, "subset": subset, "n": n,
                            "with_wnu": sum(with_) / n, "without_wnu": sum(without) / n,
                            "diff": (sum(with_) - sum(without)) / n, "with_only": exact["b_only"],
                            "without_only": exact["a_only"], "p_mcnemar": exact["p_mcnemar"],
                            "power_10_points": mcnemar_power(n, (exact["a_only"] + exact["b_only"]) / n, difference)})
    table = pd.DataFrame(records)
    if len(table):
        table["p_holm"] = holm_adjusted(table["p_mcnemar"].tolist())
    return table


def main(argv: list[str] | None = None) -> int:
    from toolroute.agent import AgentConfig, create_agent
    from toolroute.config import ROOT, queries_path
    from toolroute.llm import chat_model
    from toolroute.queries import load_queries
    from toolroute_lab.shared.checkpoint import source_fingerprint

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="test")
    parser.add_argument("--kinds", default="", help="only these row kinds, comma-separated (e.g. confusion)")
    parser.add_argument("--limit", type=int, default=None, help="at most this many call rows")
    parser.add_argument("--binds", default=",".join(BINDS))
    parser.add_argument("--hours", type=float, default=None, help="stop starting rows after this long")
    args = parser.parse_args(argv)
    queries = [q for q in load_queries(queries_path("insurance", args.split)) if q.expected_tools]
    if args.kinds:
        queries = [q for q in queries if q.kind in args.kinds.split(",")]
    queries = queries[:args.limit] if args.limit else queries
    chat = chat_model(max_tokens=512)

    def make_agent(wnu: bool):
        return create_agent("insurance", llm=chat, config=AgentConfig(append_when_not_to_use=wnu, max_tool_steps=1),
                            memory_path=":memory:")

    out = ROOT / "results"
    deadline = time.monotonic() + args.hours * 3600 if args.hours else None
    runs = run_choices(make_agent, queries, args.binds.split(","), checkpoint=out / "wnu_choice.partial.jsonl",
                       tag=f"code={source_fingerprint()}|split={args.split}", deadline=deadline)
    runs.to_csv(out / "wnu_choice_runs.csv", index=False)
    table = choice_table(runs)
    table.to_csv(out / "wnu_choice.csv", index=False)
    print(table.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
