"""The BM25-first cascade against the full hybrid, on every split: accuracy, share of queries whose dense
pass was skipped, and route latency (every query embedded: the embedder's memory of recent queries is
cleared before each timed route).

    python -m toolroute_lab.studies.cascade_eval [--passes 3]   →  results/cascade.csv

The cascade's cuts are fitted on dev + tune (`routing.factory.fit_cascade`), so dev and tune are the
fitting rows and calib and test the unseen ones. Paired differences (cascade − hybrid) with bootstrap
CIs come from `evaluation.metrics.paired_comparison`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import pandas as pd

from toolroute.config import queries_path, results_dir
from toolroute.evaluation.metrics import paired_comparison, summarize
from toolroute.evaluation.retrieval import route_queries, to_rows
from toolroute.queries import load_queries
from toolroute.routing.factory import RouterConfig, build_router

SPLITS = ("dev", "tune", "calib", "test")
METRICS = ("hit@1", "mrr", "recall@5", "no_call_accuracy")


def route_latency_ms(router, texts: list[str], passes: int = 3) -> tuple[float, float]:
    """p50 and p95 of one route per text, median over `passes` passes, each query embedded anew."""
    embedder = getattr(router, "embedder", None)
    forget = getattr(embedder, "forget_queries", lambda: None)
    p50s, p95s = [], []
    for _ in range(passes):
        times = []
        for text in texts:
            forget()
            start = time.perf_counter()
            router.route(text)
            times.append((time.perf_counter() - start) * 1000)
        times.sort()
        p50s.append(statistics.median(times))
        p95s.append(times[min(len(times) - 1, round(0.95 * (len(times) - 1)))])
    return round(statistics.median(p50s), 2), round(statistics.median(p95s), 2)


def evaluate_cascade(passes: int = 3, splits=SPLITS) -> pd.DataFrame:
    hybrid = build_router(RouterConfig(cascade=False), progress=False)
    cascade = build_router(RouterConfig(cascade=True), progress=False)
    rule = cascade.retriever.cascade
    rows = []
    for split in splits:
        queries = load_queries(queries_path("insurance", split), hybrid.catalog.names)
        texts = [q.query for q in queries]
        base_results, cascade_results = route_queries(hybrid, queries), route_queries(cascade, queries)
        base, fast = to_rows(queries, base_results), to_rows(queries, cascade_results)
        skipped = sum(bool(r.features.get("cascade")) for r in cascade_results)
        for name, router, ranked in (("hybrid", hybrid, base), ("hybrid+cascade", cascade, fast)):
            p50, p95 = route_latency_ms(router, texts, passes)
            load = round(os.getloadavg()[0], 2)  # latency is only a figure when the cores were idle
            scores = summarize(ranked)
            row = {"split": split, "arm": name, "n": len(queries), **{m: round(scores[m], 4) for m in METRICS},
                   "dense_skipped": round(skipped / len(queries), 4) if name != "hybrid" else 0.0,
                   "route_p50_ms": p50, "route_p95_ms": p95, "load_average_1min": load,
                   "rule": "" if name == "hybrid" or rule is None else f"ratio<={rule.max_ratio}, top1>={rule.min_top1:.3f}",
                   "fitted_on_this_split": split in ("dev", "tune") and name != "hybrid"}
            if name != "hybrid":
                for m in ("hit@1", "mrr", "no_call_accuracy"):
                    diff = paired_comparison(base, fast, m)
                    row[f"{m}_diff"] = round(diff["diff"], 4)
                    row[f"{m}_diff_ci"] = f"[{diff['ci_low']:+.3f}, {diff['ci_high']:+.3f}]"
            rows.append(row)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    table = evaluate_cascade(args.passes)
    out = args.out or results_dir() / "cascade.csv"
    table.to_csv(out, index=False)
    print(table.to_string(index=False))
    print(f"written {out}")
    return table


if __name__ == "__main__":
    main()
