"""Routing as the catalogue grows: the 54 insurance cards plus distractor tools.

Two distractor series share one loop (`run_growth`): BFCL's English function documents, 54 → 2,000+
tools (`run_scale`), and Korean tools of other business lines (`toolroute_lab.e05_scale.crowding`). At
each size the insurance eval splits are routed (dense and hybrid) with the no-call rule refitted on
the calibration split; each row carries bootstrap CIs, the paired Hit@1 and MRR change from the
smallest size, the share of call rows whose top tool is a distractor, and route latency timed one
query at a time with a cold query embedding, over repeated passes (the median pass is reported).
One index namespace serves every size of a series, grown in ascending order, so each step embeds
only the distractors it adds. The incremental cost of a one-card edit is timed at chosen sizes. A
second part routes BFCL's own questions over BFCL's own tools.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from toolroute.cards import Catalog
from toolroute.config import queries_path, toolcards_dir
from toolroute.embeddings import get_embedder
from toolroute.evaluation.metrics import RoutedRow, bootstrap_ci, holm_adjusted, paired_comparison, summarize
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


def latency_ms(router: ToolRouter, queries: Sequence[str], passes: int = 1) -> np.ndarray:
    """Per-query route time (ms), one query at a time, query embedding not cached (the cold path):
    shape (passes, queries), one row per pass over the same queries."""
    if passes < 1:
        raise ValueError(f"passes must be at least 1, got {passes}")
    embedder = router.dense.embedder if router.dense else None
    router.route(queries[0])  # warm-up: model and index pages loaded
    out = np.empty((passes, len(queries)))
    for p in range(passes):
        for i, q in enumerate(queries):
            if embedder is not None and hasattr(embedder, "forget_queries"):
                embedder.forget_queries()
            start = time.perf_counter()
            router.route(q)
            out[p, i] = (time.perf_counter() - start) * 1000
    return out


def latency_columns(times: np.ndarray, load_average: float | None = None) -> dict:
    """p50 and p95 of each pass, reported as the median pass, with the spread of p50 over the passes and
    the machine's 1-minute load average when they were timed (other work on the cores inflates them)."""
    times = np.atleast_2d(times)
    p50, p95 = np.percentile(times, 50, axis=1), np.percentile(times, 95, axis=1)
    return {"latency_p50_ms": float(np.median(p50)), "latency_p95_ms": float(np.median(p95)),
            "latency_p50_min_ms": float(p50.min()), "latency_p50_max_ms": float(p50.max()),
            "latency_passes": int(times.shape[0]), "latency_queries": int(times.shape[1]),
            "latency_load_avg": float("nan") if load_average is None else round(float(load_average), 2)}


def load_average() -> float | None:
    """The 1-minute load average (None where the platform has none)."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


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


QUALITY = [f"recall@{k}" for k in KS] + ["hit@1", "mrr", "no_call_accuracy", "false_no_call_rate"]
WITH_CI = ("hit@1", "recall@5", "mrr", "no_call_accuracy")
PAIRED = ("hit@1", "mrr")


def fields_label(fields: Sequence[str]) -> str:
    """What the tables call the card fields a router indexes, e.g. `purpose+when_to_use+tags`."""
    return "+".join(fields)


def quality_columns(rows: Sequence[RoutedRow], base_names: set[str], n_boot: int = 2000) -> dict:
    """Metrics with 95% bootstrap CIs, and how distractors (tools not in `base_names`) rank: on top of a
    call row (`top1_distractor`), anywhere in its top 5 (`distractor_in_top5`, what a top-5 bind shows
    the LLM), and on top of a no-call row routed to a call (`no_call_to_distractor`)."""
    metrics = summarize(rows, KS)
    ci = bootstrap_ci(rows, KS, n_boot=n_boot)
    out = {k: metrics[k] for k in QUALITY}
    for m in WITH_CI:
        out[f"{m}_lo"], out[f"{m}_hi"] = ci[m]
    call = [r for r in rows if r.expected]
    no_call = [r for r in rows if not r.expected]
    stolen = [bool(r.ranked) and r.ranked[0] not in base_names for r in call]
    misrouted = [not r.no_call_predicted and bool(r.ranked) and r.ranked[0] not in base_names for r in no_call]
    in_top5 = [any(t not in base_names for t in r.ranked[:5]) for r in call]
    out["top1_distractor"] = float(np.mean(stolen)) if call else float("nan")
    out["distractor_in_top5"] = float(np.mean(in_top5)) if call else float("nan")
    out["no_call_to_distractor"] = float(np.mean(misrouted)) if no_call else float("nan")
    out["n_call"], out["n_no_call"] = len(call), len(no_call)
    return out


def _paired_columns(table: pd.DataFrame, routed: dict) -> pd.DataFrame:
    """Each row's paired change from the smallest size of its arm, card fields and split (95% bootstrap CI,
    p, and p Holm-adjusted over every such comparison in the table)."""
    table = table.copy()
    for metric in PAIRED:
        for col in ("diff", "diff_lo", "diff_hi", "diff_p"):
            table[f"{metric}_{col}"] = np.nan
    smallest = table["size"].min()
    for i, row in table.iterrows():
        if row["size"] == smallest:
            continue
        before = routed[(smallest, row["arm"], row["fields"], row["split"])]
        after = routed[(row["size"], row["arm"], row["fields"], row["split"])]
        for metric in PAIRED:
            c = paired_comparison(before, after, metric, KS)
            table.loc[i, [f"{metric}_diff", f"{metric}_diff_lo", f"{metric}_diff_hi", f"{metric}_diff_p"]] = \
                [c["diff"], c["ci_low"], c["ci_high"], c["p_value"]]
    table["hit@1_diff_p_holm"] = holm_adjusted(table["hit@1_diff_p"].tolist())
    return table


def run_growth(base: Catalog, grow: Callable[[int], Catalog], sizes: Sequence[int], arms: Sequence[str],
               splits: Sequence[str] = ("test",), series: str = "", config: RouterConfig = RouterConfig(),
               embedder=None, chroma_path: str | Path | None = None, latency_queries: int = 100,
               latency_passes: int = 3, edit_sizes: Sequence[int] = (), n_boot: int = 2000,
               field_sets: Sequence[Sequence[str]] | None = None,
               progress: bool = True) -> tuple[pd.DataFrame, dict[tuple[int, str, str, str], list[RoutedRow]]]:
    """One row per (size, arm, card fields, split); `grow(size)` gives the catalogue of `size` tools
    (`base` plus distractors, one catalogue name for every size so the index grows incrementally);
    `field_sets` (default: the configuration's fields) are the card fields indexed, each its own index.
    Latency is timed once per (size, arm, fields) on the first split's queries and repeated on its other
    splits' rows. Also returns the routed rows by (size, arm, fields label, split)."""
    queries = {split: load_queries(queries_path("insurance", split), base.names) for split in splits}
    calib_path = default_dev_file(toolcards_dir("insurance"))
    embedder = embedder or get_embedder(config.embedder)
    client = open_client(chroma_path)
    sizes = sorted(set(int(s) for s in sizes))
    if sizes[0] < len(base):
        raise ValueError(f"sizes must be at least {len(base)} (the insurance cards), got {sizes[0]}")
    timing_queries = [q.query for q in queries[splits[0]]][:latency_queries]
    base_names = set(base.names)
    rows, routed = [], {}
    variants = [(arm, tuple(fields)) for arm in arms for fields in (field_sets or [config.fields])]
    bar = tqdm(total=len(sizes) * len(variants), desc=f"catalogue sizes ({series or 'distractors'})", unit="arm",
               disable=not progress)
    for size in sizes:
        catalog = grow(size)
        for arm, fields in variants:
            router = _router(catalog, arm, embedder, client, config.with_(fields=fields), calib_path)
            report = router.build_report
            label = fields_label(fields)
            quality = {}
            for split, split_queries in queries.items():
                routed[(size, arm, label, split)] = to_rows(split_queries, route_queries(router, split_queries))
                quality[split] = quality_columns(routed[(size, arm, label, split)], base_names, n_boot)
            common = {"series": series, "size": size, "arm": arm, "fields": label, "tools": len(catalog),
                      "distractors": len(catalog) - len(base), "records": report.records if report else 0,
                      "embedded": report.embedded if report else 0,
                      "build_seconds": report.seconds if report else 0.0,
                      **latency_columns(latency_ms(router, timing_queries, latency_passes), load_average())}
            if size in edit_sizes:  # last: the edit and its undo rewrite one record of the index
                common.update(edit_cost(router))
            rows.extend({**common, "split": split, **quality[split]} for split in queries)
            bar.update(1)
    bar.close()
    return _paired_columns(pd.DataFrame(rows), routed), routed


def run_scale(sizes: Sequence[int] = (54, 200, 500, 1000, 2000, 2628), arms: Sequence[str] = ("dense", "hybrid"),
              split: str = "test", config: RouterConfig = RouterConfig(), embedder=None,
              chroma_path: str | Path | None = None, latency_queries: int = 100, seed: int = 0,
              wheel: Path | None = None, latency_passes: int = 3, progress: bool = True) -> pd.DataFrame:
    """The BFCL series, one row per (size, arm): Recall@k, Hit@1, MRR, no-call accuracy (with CIs),
    latency (median of `latency_passes`), index size, and the one-card edit cost at the smallest and
    the largest size."""
    base = open_catalog(toolcards_dir("insurance"))
    embedder = embedder or get_embedder(config.embedder)

    def grow(size: int) -> Catalog:
        grown = bfcl.with_distractors(base, size - len(base), seed, wheel)
        return Catalog("insurance-scale", grown.cards, grown.sources, authored=False)

    sizes = sorted(set(int(s) for s in sizes))
    table, _ = run_growth(base, grow, sizes, arms, (split,), "bfcl", config, embedder, chroma_path,
                          latency_queries, latency_passes, edit_sizes=(sizes[0], sizes[-1]), progress=progress)
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


def _ci_text(row: pd.Series, metric: str) -> str:
    lo, hi = row.get(f"{metric}_lo"), row.get(f"{metric}_hi")
    return f" [{lo:.3f}, {hi:.3f}]" if lo is not None and pd.notna(lo) else ""


def series_findings(table: pd.DataFrame, label: str = "", threshold: float = 0.9, split: str = "test") -> list[str]:
    """Per arm, how one distractor series moved Hit@1 (with CIs and the paired change at the largest size
    when the table has them), Recall@5, no-call accuracy, the share of call rows a distractor took, and latency."""
    if "split" in table:
        table = table[table["split"] == split]
    if "fields" in table:  # the configured router's cards; other field sets are diagnostics
        table = table[table["fields"] == fields_label(RouterConfig().fields)]
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
        paired = ""
        if pd.notna(last.get("hit@1_diff", np.nan)):
            paired = (f", paired change {last['hit@1_diff']:+.3f} [{last['hit@1_diff_lo']:+.3f}, "
                      f"{last['hit@1_diff_hi']:+.3f}]")
        stolen = ""
        if pd.notna(last.get("top1_distractor", np.nan)):
            stolen = f"; a distractor on top for {last['top1_distractor']:.1%} of call rows at {int(last['size'])}"
        passes = int(last["latency_passes"]) if pd.notna(last.get("latency_passes", np.nan)) else 1
        lines.append(f"- **{label + ' ' if label else ''}{arm}**: Hit@1 {first['hit@1']:.3f}{_ci_text(first, 'hit@1')} at "
                     f"{int(first['size'])} tools → {last['hit@1']:.3f}{_ci_text(last, 'hit@1')} at {int(last['size'])}"
                     f"{paired} ({where}); Recall@5 {first['recall@5']:.3f} → {last['recall@5']:.3f}; "
                     f"no-call accuracy {first['no_call_accuracy']:.3f} → {last['no_call_accuracy']:.3f}{stolen}; "
                     f"latency p50 {first['latency_p50_ms']:.1f} → {last['latency_p50_ms']:.1f} ms "
                     f"(p95 {last['latency_p95_ms']:.1f} ms; " + (f"median of {passes} passes)." if passes > 1 else
                                                                   "one pass)."))
    return lines


def findings(table: pd.DataFrame, bfcl_table: pd.DataFrame | None = None, bfcl_questions: int = 0,
             bfcl_tools: int = 0, threshold: float = 0.9, korean: pd.DataFrame | None = None) -> list[str]:
    """Markdown lines for the notebook's closing cell, computed from the tables: the Korean series (when
    measured), the BFCL series, one-card edit costs, BFCL's own routing task."""
    lines = series_findings(korean, "Korean distractors,", threshold) if korean is not None and len(korean) else []
    lines += series_findings(table, "BFCL distractors," if lines else "", threshold)
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
