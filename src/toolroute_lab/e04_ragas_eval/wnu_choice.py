"""when_not_to_use where the seed says it acts: in the LLM's choice among the bound tools (issue 39, item 1b).

Seed 002 keeps `when_not_to_use` out of the embedding and appends it to the bound tools' descriptions,
so that the model choosing among look-alike tools reads "쓰지 말 때: … → other_tool". The agent does that
by default (`AgentConfig.append_when_not_to_use`); here it is turned off and on with everything else
the same (router, model, system prompt), on the call rows of the query splits, under two kinds of bind:

- `routed@k`: the router's top k (the agent as it runs; nothing bound when the router decides no call);
- `oracle_confusers`: the gold tools plus every tool their cards and the cards pointing at them name as
  a look-alike (`toolroute_lab.shared.arms.BINDINGS`): the choice the field is written for, with the
  right tool always present.

The outcome is the model's choice alone (`Agent.first_call`: the agent's first prompt sent once, the
tool its reply calls first; no tool runs and no answer is written): `chose_gold` when that tool is a gold
one. Per bind and subset (every call row, the confusion-pair rows) `choice_table` pairs the two settings
on the same rows: the rates, the rows only one side got right, the exact McNemar p, Holm over the table,
and the power of that test to detect a 10-point difference at the observed discordance (`mcnemar_power`).

Run by notebook 04 (`wnu_binds`), or alone: `python -m toolroute_lab.e04_ragas_eval.wnu_choice --splits test,dev
--kinds confusion` (writes `results/wnu_choice_runs.csv` and `results/wnu_choice.csv`; finished rows are kept
in `results/wnu_choice.partial.jsonl` and not run again).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd
from tqdm.auto import tqdm

from toolroute.evaluation.metrics import holm_adjusted, mcnemar_exact
from toolroute_lab.shared.arms import parse_arms
from toolroute_lab.shared.checkpoint import RowCheckpoint

BINDS = ("routed@5", "oracle_confusers")  # routed@3's lists are the first three of routed@5's
SETTINGS = (True, False)  # append_when_not_to_use: the agent's default first
DIFFERENCE = 0.10  # the difference whose detection power `choice_table` states
AgentMaker = Callable[[bool], Any]  # append_when_not_to_use -> a toolroute.agent.Agent (`first_call`)


def run_choices(make_agent: AgentMaker, queries: Sequence[Any], binds: Sequence[str] = BINDS,
                checkpoint: str | Path | None = None, tag: str = "", progress: bool = True,
                deadline: float | None = None, split: str = "") -> pd.DataFrame:
    """Every call row under every bind, with `when_not_to_use` in the descriptions and without, one row
    each: which tools were bound and which tool the model called first. Interleaved per query (both
    settings and every bind before the next query), so a run stopped at `deadline` stays paired.
    `split` is recorded per row (and keys the checkpoint with the id)."""
    arms = parse_arms(list(binds), [5])
    saved = RowCheckpoint(checkpoint, ["split", "id", "bind", "wnu"], tag)
    agents: dict[bool, Any] = {}
    rows = []
    calls = [q for q in queries if q.expected_tools]
    for query in tqdm(calls, desc=f"wnu choice {split}".strip(), disable=not progress):
        if deadline is not None and time.monotonic() > deadline:
            break
        for arm in arms:
            for wnu in SETTINGS:
                row = saved.get(split=split, id=query.id, bind=arm.name, wnu=wnu)
                if row is None:
                    agent = agents.get(wnu) or agents.setdefault(wnu, make_agent(wnu))
                    tools = None if arm.routed else arm.binding.tools(query.expected_tools, agent)
                    choice = agent.first_call(query.query, tools=tools, top_k=arm.top_k or None)
                    row = {"split": split, "id": query.id, "kind": query.kind, "bind": arm.name, "wnu": wnu,
                           "expected": list(query.expected_tools), "bound": choice["bound"],
                           "first_call": choice["first_call"],
                           "chose_gold": float(choice["first_call"] in query.expected_tools),
                           "gold_bound": float(set(query.expected_tools) <= set(choice["bound"])),
                           "prompt_tokens": choice["prompt_tokens"], "seconds": choice["seconds"],
                           "error": choice["error"]}
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
            index = ["split", "id"] if "split" in part.columns else ["id"]
            wide = part.pivot_table(index=index, columns="wnu", values="chose_gold", aggfunc="first").dropna()
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


def choice_queries(splits: Sequence[str], kinds: Sequence[str] | None = None, limit: int | None = None,
                   domain: str = "insurance") -> dict[str, list[Any]]:
    """split -> its call rows (of `kinds` when given; the first `limit` of each when given)."""
    from toolroute.config import queries_path
    from toolroute.queries import load_queries

    out = {}
    for split in splits:
        rows = [q for q in load_queries(queries_path(domain, split)) if q.expected_tools]
        rows = [q for q in rows if not kinds or q.kind in kinds]
        out[split] = rows[:limit] if limit else rows
    return out


def run_splits(make_agent: AgentMaker, queries: dict[str, list[Any]], binds: Sequence[str] = BINDS,
               checkpoint: str | Path | None = None, tag: str = "", progress: bool = True,
               deadline: float | None = None) -> pd.DataFrame:
    """`run_choices` on each split's rows in turn, one table (a `split` column)."""
    agents: dict[bool, Any] = {}

    def shared(wnu: bool) -> Any:  # one agent per setting for every split
        return agents.get(wnu) or agents.setdefault(wnu, make_agent(wnu))

    frames = [run_choices(shared, rows, binds, checkpoint, tag, progress, deadline, split)
              for split, rows in queries.items()]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def run_models(models: Sequence[Any], make_agent: Callable[[Any, bool], Any], queries: dict[str, list[Any]],
               binds: Sequence[str] = BINDS, checkpoint: str | Path | None = None, tag: str = "",
               progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Notebook 04's part: `run_splits` for each model of the notebook (`select_llms`; the replay stand-in
    has no choice to measure and is skipped) with `make_agent(chat, wnu)`; (every row, `choice_table` per
    model), `model` first in both."""
    runs, tables = [], []
    for model in models:
        if getattr(model, "replay", False):
            continue
        part = run_splits(lambda wnu, chat=model.chat: make_agent(chat, wnu), queries, binds, checkpoint,
                          f"{model.tag}|{tag}", progress)
        part.insert(0, "model", model.name)
        runs.append(part)
        table = choice_table(part)
        table.insert(0, "model", model.name)
        tables.append(table)
    if not runs:
        return pd.DataFrame(), pd.DataFrame()
    return pd.concat(runs, ignore_index=True), pd.concat(tables, ignore_index=True)


def choice_plot(table: pd.DataFrame, path: str | Path | None = None):
    """The choice rate with and without when_not_to_use per bind (panels: subsets), Wilson 95% intervals,
    each pair labelled with its exact McNemar p (Holm) and n."""
    import matplotlib.pyplot as plt
    import numpy as np

    from toolroute.evaluation.metrics import wilson_interval
    from toolroute_lab.shared import arms as arm_words
    from toolroute_lab.shared import figures

    subsets = list(dict.fromkeys(table["subset"]))
    fig, axes = plt.subplots(1, len(subsets), figsize=(5.2 * len(subsets), 3.8), sharey=True, squeeze=False)
    for ax, subset in zip(axes[0], subsets):
        part = table[table["subset"] == subset].reset_index(drop=True)
        x = np.arange(len(part))
        for offset, column, label, color in ((-0.18, "with_wnu", "with when_not_to_use", "#1f77b4"),
                                             (0.18, "without_wnu", "without", "#bbbbbb")):
            rates = part[column].to_numpy()
            lo, hi = zip(*(wilson_interval(round(r * n), n) for r, n in zip(rates, part["n"])))
            ax.bar(x + offset, rates, 0.34, color=color, label=label,
                   yerr=[rates - np.array(lo), np.array(hi) - rates], capsize=3)
        for i, row in part.iterrows():
            ax.text(i, 1.02, f"p={row['p_holm']:.2f} (Holm)\nn={int(row['n'])}", ha="center", va="bottom", fontsize=8)
        ax.set_xticks(x, [arm_words.title(b) for b in part["bind"]], fontsize=8)
        ax.set_ylim(0, 1.18)
        ax.set_title(subset)
        ax.set_ylabel("first call is a gold tool")
    axes[0][0].legend(loc="lower left", fontsize=8)
    fig.suptitle("when_not_to_use in the bound descriptions: the model's first choice, paired rows")
    fig.tight_layout()
    if path is not None:
        figures.save(fig, path)
    return fig


def main(argv: list[str] | None = None) -> int:
    from toolroute.agent import AgentConfig, create_agent
    from toolroute.config import ROOT
    from toolroute.llm import chat_model
    from toolroute_lab.shared.checkpoint import source_fingerprint

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", default="test", help="query splits, comma-separated (e.g. test,dev)")
    parser.add_argument("--kinds", default="", help="only these row kinds, comma-separated (e.g. confusion)")
    parser.add_argument("--limit", type=int, default=None, help="at most this many call rows per split")
    parser.add_argument("--binds", default=",".join(BINDS))
    parser.add_argument("--hours", type=float, default=None, help="stop starting rows after this long")
    args = parser.parse_args(argv)
    queries = choice_queries(args.splits.split(","), [k for k in args.kinds.split(",") if k], args.limit)
    chat = chat_model(max_tokens=512)

    def make_agent(wnu: bool):
        return create_agent("insurance", llm=chat, config=AgentConfig(append_when_not_to_use=wnu), memory_path=":memory:")

    out = ROOT / "results"
    deadline = time.monotonic() + args.hours * 3600 if args.hours else None
    runs = run_splits(make_agent, queries, args.binds.split(","), checkpoint=out / "wnu_choice.partial.jsonl",
                      tag=f"code={source_fingerprint()}", deadline=deadline)
    runs.to_csv(out / "wnu_choice_runs.csv", index=False)
    table = choice_table(runs)
    table.to_csv(out / "wnu_choice.csv", index=False)
    print(table.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
