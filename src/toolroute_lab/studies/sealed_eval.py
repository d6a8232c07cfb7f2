"""The sealed test set measured once per frozen router (issue 39, item 4; data/insurance/queries/SEALED.md).

`python -m toolroute_lab.studies.sealed_eval --frozen <commit>` routes the sealed set and the old test
split with the default router and appends to `results/sealed_eval.csv` one row per set: Hit@1, the
end-to-end right-call rate and the other metrics with 95% bootstrap CIs, the router's label, the commit
whose message froze the choices, the commit evaluated, when and on which CPU. A second evaluation of the
same router label after the same frozen commit is refused: the sealed set measures a frozen router once,
and a number read twice is no longer held out.
"""

from __future__ import annotations

import argparse
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from toolroute.config import ROOT, queries_path, toolcards_dir
from toolroute.evaluation.metrics import bootstrap_ci, summarize
from toolroute.evaluation.retrieval import route_queries, to_rows
from toolroute.queries import load_queries
from toolroute.routing import RouterConfig, build_router, open_catalog
from toolroute_lab.shared.machine import cpu_model

RESULTS = ROOT / "results" / "sealed_eval.csv"
SETS = {"sealed": "written by someone who saw neither cards nor splits; measured once",
        "test": "the old test split, read during development"}
METRICS = ("right_call", "hit@1", "recall@5", "mrr", "no_call_accuracy", "false_no_call_rate")


def _head() -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def already_evaluated(table: pd.DataFrame, label: str, frozen: str) -> bool:
    return bool(len(table)) and bool(((table["router"] == label) & (table["frozen_commit"] == frozen)
                                      & (table["set"] == "sealed")).any())


def evaluate_sets(config: RouterConfig, frozen: str, evaluated: str, cpu: str, n_boot: int = 2000) -> pd.DataFrame:
    catalog = open_catalog(toolcards_dir("insurance"))
    router = build_router(config, catalog, progress=False)
    rows = []
    for name, about in SETS.items():
        queries = load_queries(queries_path("insurance", name), catalog.names)
        routed = to_rows(queries, route_queries(router, queries))
        point, ci = summarize(routed), bootstrap_ci(routed, n_boot=n_boot)
        rows.append({"set": name, "about": about, "n": len(queries), "n_call": sum(q.is_call for q in queries),
                     **{k: v for m in METRICS for k, v in ((m, point[m]), (f"{m}_lo", ci[m][0]), (f"{m}_hi", ci[m][1]))},
                     "router": config.label, "frozen_commit": frozen, "evaluated_commit": evaluated,
                     "evaluated_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "cpu": cpu})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frozen", required=True, help="the commit whose message froze the choices")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args(argv)
    config = RouterConfig()
    out = Path(args.out)
    table = pd.read_csv(out) if out.is_file() else pd.DataFrame()
    if already_evaluated(table, config.label, args.frozen):
        print(f"error: {config.label} was measured on the sealed set after {args.frozen} already ({out}); "
              "a second look is not a held-out number")
        return 2
    fresh = evaluate_sets(config, args.frozen, _head(), cpu_model())
    pd.concat([table, fresh], ignore_index=True).to_csv(out, index=False)
    print(fresh[["set", "n", "right_call", "right_call_lo", "right_call_hi", "hit@1", "hit@1_lo", "hit@1_hi",
                 "recall@5", "no_call_accuracy"]].to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
