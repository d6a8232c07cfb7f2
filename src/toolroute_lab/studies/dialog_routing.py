"""Follow-up turns: every history arm on the insurance dialog splits, and the single-turn splits unchanged.

`python -m toolroute_lab.studies.dialog_routing` writes `results/dialog_routing.csv`:

- for `dialog_dev` (where the arm and its weights were chosen) and `dialog_test` (measured only), each
  history arm (`none`, `carry`, `weighted`, `carry+weighted`, see `toolroute.routing.history`) over the
  insurance cards, and `none` / `weighted` over the same 54 tools given as OpenAI schemas only (no
  cards, no domain pack: the generic case). Hit@1, Recall@5, MRR with 95% bootstrap CIs as
  `toolroute eval-retrieval` computes them; no-call accuracy with its 95% Wilson interval (10-14 rows);
  Hit@1 on the follow-up and on the topic-change rows apart; each arm's paired difference from `none`
  (paired bootstrap CI and p).
- for the single-turn splits (dev, tune, calib, test): the default router's metrics, and whether every
  ranking and decision is identical with the default history arm given (they have no history rows).

`--grid` instead writes `results/dialog_weighting_grid.csv`: the weighted arm's settings tried on
`dialog_dev` (the test split is refused), from which `HistoryWeighting`'s defaults were chosen.
The router is `RouterConfig()` (the default: hybrid e5-small + BM25, no-call rule fitted on calib).
"""

from __future__ import annotations

import argparse
import itertools
import json
import shlex
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

import pandas as pd
from langchain_core.utils.function_calling import convert_to_openai_tool

from toolroute.agent.pack import load_pack
from toolroute.agent.rewriter import catalog_carry
from toolroute.config import ROOT, data_dir, queries_path, toolcards_dir
from toolroute.evaluation.metrics import RoutedRow, bootstrap_ci, paired_comparison, summarize, wilson_interval
from toolroute.evaluation.retrieval import route_queries, to_rows
from toolroute.queries import EvalQuery, load_queries
from toolroute.routing import RouterConfig, ToolRouter, build_router, open_catalog
from toolroute.routing.history import DEFAULT_HISTORY_ARM, HISTORY_ARMS, HistoryRouting, HistoryWeighting

DIALOG_SPLITS = ("dialog_dev", "dialog_test")
SINGLE_TURN_SPLITS = ("dev", "tune", "calib", "test")
KS = (1, 5)
METRICS = ("hit@1", "recall@5", "mrr")


def schemas_catalog(domain: str = "insurance") -> Path:
    """The domain's tools as a JSON list of OpenAI schemas (descriptions and parameters only), written
    once under the data dir (a stable path, so its index is built once)."""
    schemas = [convert_to_openai_tool(tool) for tool in load_pack(domain).tools]
    text = json.dumps(schemas, ensure_ascii=False, indent=1)
    path = data_dir() / "schemas" / f"{domain}_tools.json"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return path


def arm_row(rows: list[RoutedRow], queries: Sequence[EvalQuery], baseline: list[RoutedRow] | None) -> dict:
    """Point estimates, CIs, per-kind Hit@1 and the paired difference from `baseline` (the `none` arm)."""
    point, ci = summarize(rows, KS), bootstrap_ci(rows, KS)
    record: dict = {"n": len(rows), "n_call": sum(bool(r.expected) for r in rows),
                    "n_no_call": sum(not r.expected for r in rows)}
    for metric in METRICS:
        record[metric] = round(point[metric], 4)
        record[f"{metric}_ci_low"], record[f"{metric}_ci_high"] = (round(v, 4) for v in ci[metric])
    no_call = [r for r in rows if not r.expected]
    right = sum(r.no_call_predicted for r in no_call)
    record["no_call_accuracy"] = round(right / len(no_call), 4) if no_call else float("nan")
    record["no_call_accuracy_ci_low"], record["no_call_accuracy_ci_high"] = (
        round(v, 4) for v in wilson_interval(right, len(no_call)))
    record["false_no_call_rate"] = round(point["false_no_call_rate"], 4)
    for kind in ("followup", "topic_change"):
        part = [r for r, q in zip(rows, queries) if q.kind == kind]
        record[f"hit@1_{kind}"] = round(summarize(part, KS)["hit@1"], 4) if part else float("nan")
        record[f"n_{kind}"] = len(part)
    if baseline is not None:
        for metric in METRICS:
            paired = paired_comparison(baseline, rows, metric, ks=KS, n_boot=2000)
            record[f"{metric}_diff_vs_none"] = round(paired["diff"], 4)
            record[f"{metric}_diff_ci_low"] = round(paired["ci_low"], 4)
            record[f"{metric}_diff_ci_high"] = round(paired["ci_high"], 4)
            record[f"{metric}_diff_p"] = round(paired["p_value"], 4)
    return record


def history_arms(catalog_source: str, weighting: HistoryWeighting = HistoryWeighting()) -> dict[str, HistoryRouting]:
    """Every arm the catalogue allows: all four with a domain pack, `none` and `weighted` without."""
    carry = catalog_carry(catalog_source)
    names = HISTORY_ARMS if carry is not None else ("none", "weighted")
    return {name: HistoryRouting(name, carry if "carry" in name else None, weighting) for name in names}


def measure_dialogs(router: ToolRouter, catalog_label: str, catalog_source: str, splits: Sequence[str],
                    weighting: HistoryWeighting = HistoryWeighting()) -> list[dict]:
    out = []
    names = router.catalog.names
    for split in splits:
        queries = load_queries(queries_path("insurance", split), names)
        baseline = None
        for arm, routing in history_arms(catalog_source, weighting).items():
            rows = to_rows(queries, route_queries(router, queries, history=routing))
            baseline = rows if arm == "none" else baseline
            record = {"split": split, "catalog": catalog_label, "history_arm": arm,
                      "default": arm == DEFAULT_HISTORY_ARM or (catalog_label != "cards" and arm == "weighted")}
            out.append({**record, **arm_row(rows, queries, None if arm == "none" else baseline)})
    return out


def single_turn_unchanged(router: ToolRouter, splits: Sequence[str] = SINGLE_TURN_SPLITS) -> list[dict]:
    """The default router on each single-turn split, routed without and with the default history arm:
    the metrics, and whether every ranking, score and decision is the same (it must be: no history)."""
    carry = catalog_carry(str(toolcards_dir("insurance")))
    routing = HistoryRouting(DEFAULT_HISTORY_ARM, carry)
    out = []
    for split in splits:
        queries = load_queries(queries_path("insurance", split), router.catalog.names)
        plain = route_queries(router, queries)
        with_history = route_queries(router, queries, history=routing)
        same = all(a.ranked == b.ranked and a.no_call == b.no_call and a.call_probability == b.call_probability
                   for a, b in zip(plain, with_history))
        record = {"split": split, "catalog": "cards", "history_arm": f"none = {DEFAULT_HISTORY_ARM}",
                  "default": True, "unchanged_with_history_arm": same}
        out.append({**record, **arm_row(to_rows(queries, plain), queries, None)})
    return out


WEIGHTING_GRID = {
    "turn_weight": (0.5, 0.6, 0.7, 0.8, 0.9),
    "user_turns": (1, 2),
    "assistant_weight": (0.0, 0.15),
    "no_call_from": ("mix", "turn"),
}


def weighting_grid(router: ToolRouter, split: str = "dialog_dev") -> list[dict]:
    """The weighted and carry+weighted arms over `WEIGHTING_GRID` on a tuning split (never the test split)."""
    if split != "dialog_dev":
        raise ValueError(f"the history weights are chosen on dialog_dev only, not on '{split}'")
    queries = load_queries(queries_path("insurance", split), router.catalog.names)
    carry = catalog_carry(str(toolcards_dir("insurance")))
    out = []
    followups_only = catalog_carry(str(toolcards_dir("insurance")), always_carry=False)
    # The reference lines, no weights to choose: the turn alone, the agent's carry, and the carry the
    # rewriter does without `always_carry` (short or referential turns only).
    for arm, label, function in (("none", "none", None), ("carry", "carry", carry),
                                 ("carry", "carry (follow-ups only)", followups_only)):
        rows = to_rows(queries, route_queries(router, queries, history=HistoryRouting(arm, function)))
        point = summarize(rows, KS)
        out.append({"split": split, "history_arm": label,
                    **{m: round(point[m], 4) for m in (*METRICS, "no_call_accuracy", "false_no_call_rate")}})
    keys = list(WEIGHTING_GRID)
    for values in itertools.product(*WEIGHTING_GRID.values()):
        settings = dict(zip(keys, values))
        if settings["turn_weight"] + settings["assistant_weight"] > 1:
            continue
        weighting = HistoryWeighting(**settings)
        for arm in ("weighted", "carry+weighted"):
            routing = HistoryRouting(arm, carry if "carry" in arm else None, weighting)
            rows = to_rows(queries, route_queries(router, queries, history=routing))
            point = summarize(rows, KS)
            out.append({"split": split, "history_arm": arm, **asdict(weighting),
                        **{m: round(point[m], 4) for m in (*METRICS, "no_call_accuracy", "false_no_call_rate")}})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolroute_lab.studies.dialog_routing", description=__doc__.splitlines()[0])
    parser.add_argument("--splits", default=",".join(DIALOG_SPLITS), help="dialog splits to measure")
    parser.add_argument("--out", default=None, help="CSV (default: results/dialog_routing.csv, with --grid "
                                                    "results/dialog_weighting_grid.csv)")
    parser.add_argument("--grid", action="store_true", help="the weighting grid on dialog_dev instead")
    parser.add_argument("--no-single-turn", action="store_true", help="skip the single-turn splits check")
    args = parser.parse_args(argv)
    command = "python -m toolroute_lab.studies.dialog_routing " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    cards = build_router(RouterConfig(), progress=False)
    if args.grid:
        table = pd.DataFrame(weighting_grid(cards))
        out = Path(args.out or ROOT / "results" / "dialog_weighting_grid.csv")
    else:
        splits = [s.strip() for s in args.splits.split(",") if s.strip()]
        records = measure_dialogs(cards, "cards", str(toolcards_dir("insurance")), splits)
        schemas = str(schemas_catalog("insurance"))
        generic = build_router(RouterConfig(catalog=schemas, dev=str(queries_path("insurance", "calib"))), progress=False)
        records += measure_dialogs(generic, "schemas", schemas, splits)
        if not args.no_single_turn:
            records += single_turn_unchanged(cards)
        table = pd.DataFrame(records)
        out = Path(args.out or ROOT / "results" / "dialog_routing.csv")
    table["command"] = command.strip()
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.drop(columns=["command"]).to_string(index=False))
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
