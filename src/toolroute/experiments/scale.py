"""Routing as the catalogue grows: the 54 insurance cards plus BFCL distractors, 54 → 2,000+ tools.

At each size the same insurance eval split is routed (dense and hybrid), with the no-call rule
refitted on the calibration split, and route latency is timed one query at a time with a cold
query embedding. One index namespace serves every size, grown in ascending order, so each step
embeds only the distractors it adds. The incremental cost of a one-card edit is timed at the
smallest and the largest size. A second part routes BFCL's own questions over BFCL's own tools.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from toolroute.cards import Catalog
from toolroute.config import queries_path, toolcards_dir
from toolroute.embeddings import get_embedder
from toolroute.evaluation.metrics import summarize
from toolroute.queries import EvalQuery, load_queries
from toolroute.evaluation.retrieval import route_queries, to_rows
from toolroute.external import bfcl
from toolroute.chroma import open_client
from toolroute.routing.router import ToolRouter
from toolroute.routing import RouterConfig, build_router, default_dev_file, open_catalog
from toolroute.routing import ARMS

KS = (1, 3, 5, 10)
EDIT_CARD = "premium_estimate"
EDIT_EXAMPLE = "이 상품 한 달에 얼마씩 내야 하는지 계산해 줘"  # a dev-style utterance, added and removed again


def check_parameters(sizes: Sequence[int], arms: Sequence[str], split: str, bfcl_categories: Sequence[str] = (),
                     bfcl_arms: Sequence[str] = ()) -> None:
    """What the notebook would fail on, checked before any model loads (ValueError naming the parameter)."""

    if not sizes or any(int(s) < 54 for s in sizes):
        raise ValueError(f"sizes: every size must be at least 54 (the insurance cards), got {list(sizes)}")
    for label, given in (("arms", arms), ("bfcl_arms", bfcl_arms)):
        unknown = [a for a in given if a not in ARMS]
        if unknown:
            raise ValueError(f"{label}: unknown arm(s) {unknown}; known: {list(ARMS)}")
    if not queries_path("insurance", split).is_file():
        raise ValueError(f"split: no insurance query split '{split}' ({queries_path('insurance', split)})")
    unknown = [c for c in bfcl_categories if c not in bfcl.TOOL_CATEGORIES]
    if unknown:
        raise ValueError(f"bfcl_categories: unknown BFCL categories {unknown}; known: {list(bfcl.TOOL_CATEGORIES)}")


def _router(catalog: Catalog, arm: str, embedder, client, config: RouterConfig, calib: Path | None = None,
            progress: bool = False) -> ToolRouter:
    """The configured router over a throw-away catalogue; the no-call rule is fitted on `calib`, not saved."""
    return build_router(config.with_(arm=arm, embedder=embedder, dev=str(calib) if calib else None), catalog, client,
                        progress=progress, no_call="fit" if calib else "none")


def latency_ms(router: ToolRouter, queries: Sequence[str]) -> np.ndarray:
    """Per-query route time, one query at a time, query embedding not cached (the cold path)."""
    out = []
    embedder = router.dense.embedder if router.dense else None
    router.route(queries[0])  # warm-up: model and index pages loaded
    for q in queries:
        if embedder is not None and hasattr(embedder, "forget_queries"):
            embedder.forget_queries()
        start = time.perf_counter()
        router.route(q)
        out.append((time.perf_counter() - start) * 1000)
    return np.asarray(out)


def edit_cost(router: ToolRouter) -> dict:
    """Seconds to apply (and then undo) a one-example edit of one card in place."""
    catalog = router.catalog
    card = catalog.cards[EDIT_CARD]
    edited = Catalog(catalog.name, {**catalog.cards, EDIT_CARD: card.model_copy(
        update={"when_to_use": (*card.when_to_use, EDIT_EXAMPLE)})}, catalog.sources, catalog.authored)
    apply = router.update_catalog(edited)
    undo = router.update_catalog(catalog)
    return {"edit_seconds": apply["seconds"], "edit_dense_seconds": apply["dense_seconds"],
            "edit_records_embedded": apply["records_embedded"], "undo_seconds": undo["seconds"]}


def run_scale(sizes: Sequence[int] = (54, 200, 500, 1000, 2000, 2628), arms: Sequence[str] = ("dense", "hybrid"),
              split: str = "test", config: RouterConfig = RouterConfig(), embedder=None,
              chroma_path: str | Path | None = None, latency_queries: int = 100, seed: int = 0,
              wheel: Path | None = None, progress: bool = True) -> pd.DataFrame:
    """One row per (size, arm): Recall@k, Hit@1, MRR, no-call accuracy, latency, index size, costs."""
    base = open_catalog(toolcards_dir("insurance"))
    queries = load_queries(queries_path("insurance", split), base.names)
    calib_path = default_dev_file(toolcards_dir("insurance"))
    embedder = embedder or get_embedder(config.embedder)
    client = open_client(chroma_path)
    sizes = sorted(set(int(s) for s in sizes))
    if sizes[0] < len(base):
        raise ValueError(f"sizes must be at least {len(base)} (the insurance cards), got {sizes[0]}")
    timing_queries = [q.query for q in queries][:latency_queries]
    rows = []
    bar = tqdm(total=len(sizes) * len(arms), desc="catalogue sizes", unit="arm", disable=not progress)
    for size in sizes:
        grown = bfcl.with_distractors(base, size - len(base), seed, wheel)
        catalog = Catalog("insurance-scale", grown.cards, grown.sources, authored=False)
        for arm in arms:
            router = _router(catalog, arm, embedder, client, config, calib_path)
            report = router.build_report
            build_seconds = report.seconds if report else 0.0
            routed = to_rows(queries, route_queries(router, queries))
            metrics = summarize(routed, KS)
            lat = latency_ms(router, timing_queries)
            row = {"size": size, "arm": arm, "tools": len(catalog), "records": report.records if report else 0,
                   "embedded": report.embedded if report else 0, "build_seconds": build_seconds,
                   **{k: metrics[k] for k in [f"recall@{k}" for k in KS] + ["hit@1", "mrr", "no_call_accuracy",
                                                                            "false_no_call_rate"]},
                   "latency_p50_ms": float(np.percentile(lat, 50)), "latency_p95_ms": float(np.percentile(lat, 95)),
                   "latency_queries": len(timing_queries), "latency_passes": 1,
                   "n_call": sum(q.is_call for q in queries), "n_no_call": sum(not q.is_call for q in queries)}
            if size in (sizes[0], sizes[-1]):
                row.update(edit_cost(router))
            rows.append(row)
            bar.update(1)
    bar.close()
    table = pd.DataFrame(rows)
    table["vector_mb"] = table["records"] * embedder_dim(embedder) * 4 / 1e6
    return table


def embedder_dim(embedder) -> int:
    return int(np.asarray(embedder.embed_queries(["차원"])).shape[1])


def first_size_below(table: pd.DataFrame, metric: str = "hit@1", threshold: float = 0.9) -> dict[str, int | None]:
    """Per arm, the smallest catalogue size where `metric` falls below `threshold` (None: never)."""
    out = {}
    for arm, part in table.sort_values("size").groupby("arm", sort=False):
        below = part[part[metric] < threshold]
        out[arm] = int(below["size"].iloc[0]) if len(below) else None
    return out


def findings(table: pd.DataFrame, bfcl_table: pd.DataFrame | None = None, bfcl_questions: int = 0,
             bfcl_tools: int = 0, threshold: float = 0.9) -> list[str]:
    """Markdown lines for the notebook's closing cell, computed from the tables."""
    below = first_size_below(table, "hit@1", threshold)
    lines = []
    for arm, part in table.sort_values("size").groupby("arm", sort=False):
        first, last = part.iloc[0], part.iloc[-1]
        if below[arm] is None:
            where = f"never below {threshold} in this range"
        elif below[arm] == int(first["size"]):
            where = f"below {threshold} already at the smallest size, so not because of the distractors"
        else:
            where = f"first below {threshold} at {below[arm]} tools"
        lines.append(f"- **{arm}**: Hit@1 {first['hit@1']:.3f} at {int(first['size'])} tools → {last['hit@1']:.3f} at "
                     f"{int(last['size'])} ({where}); Recall@5 {first['recall@5']:.3f} → {last['recall@5']:.3f}; "
                     f"no-call accuracy {first['no_call_accuracy']:.3f} → {last['no_call_accuracy']:.3f}; "
                     f"latency p50 {first['latency_p50_ms']:.1f} → {last['latency_p50_ms']:.1f} ms "
                     f"(p95 {last['latency_p95_ms']:.1f} ms).")
    if "edit_seconds" in table:
        for e in table.dropna(subset=["edit_seconds"]).itertuples():
            lines.append(f"- One-card edit, {e.arm}, at {int(e.size)} tools ({int(e.records)} records): "
                         f"{e.edit_seconds:.2f} s ({int(e.edit_records_embedded)} record embedded).")
    if bfcl_table is not None and len(bfcl_table):
        best = bfcl_table[bfcl_table["category"] == "all"].sort_values("hit@1", ascending=False).iloc[0]
        lines.append(f"- BFCL routing ({bfcl_questions} questions, {bfcl_tools} tools): best arm {best['arm']} with "
                     f"Hit@1 {best['hit@1']:.3f}, Recall@5 {best['recall@5']:.3f}.")
    return lines


def run_bfcl_routing(arms: Sequence[str] = ("dense", "bm25", "hybrid"),
                     categories: Sequence[str] = bfcl.ROUTING_CATEGORIES, config: RouterConfig = RouterConfig(),
                     embedder=None, chroma_path: str | Path | None = None, limit: int | None = None,
                     wheel: Path | None = None, progress: bool = True) -> tuple[pd.DataFrame, list[EvalQuery], Catalog]:
    """BFCL questions over the union of their categories' functions (every row expects a call)."""
    catalog, queries = bfcl.routing_benchmark(tuple(categories), wheel=wheel, limit=limit)
    embedder = embedder or get_embedder(config.embedder)
    client = open_client(chroma_path)
    rows = []
    for arm in tqdm(arms, desc="BFCL routing", disable=not progress):
        router = _router(catalog, arm, embedder, client, config, progress=progress)
        routed = to_rows(queries, route_queries(router, queries))
        for kind in (None, *sorted({q.kind for q in queries})):
            part = [r for r, q in zip(routed, queries) if kind is None or q.kind == kind]
            metrics = summarize(part, KS)
            rows.append({"arm": arm, "category": kind or "all", "n": len(part), "tools": len(catalog),
                         **{k: metrics[k] for k in [f"recall@{k}" for k in KS] + ["hit@1", "mrr"]}})
    return pd.DataFrame(rows), queries, catalog
