"""The ToolCard ablation grid: strategy × fields × embedder × arm (× aggregation), on one split.

Each arm is built (index incremental), its no-call rule fitted on the calib split only, then measured
on the chosen split with bootstrap CIs; paired comparisons against the default arm say which
differences are real.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pandas as pd
from tqdm.auto import tqdm

from toolroute.config import queries_path, toolcards_dir
from toolroute.evaluation.metrics import DEFAULT_KS, RoutedRow, bootstrap_ci, paired_comparison, summarize
from toolroute_lab.e02_ablation.breakdowns import HOLM_ALPHA, metric_columns, with_holm
from toolroute.queries import load_queries
from toolroute.evaluation.retrieval import route_queries, to_rows
from toolroute.routing.dense import DEFAULT_FIELDS
from toolroute.chroma import open_client
from toolroute.routing import RouterConfig, build_router, open_catalog, default_dev_file
from toolroute.routing.arms import arm_named

DEFAULT_AGGREGATION = RouterConfig.aggregation


def arm_config(arm: str, embedder: str = "e5-small", granularity: str = "multi",
               fields: Sequence[str] = DEFAULT_FIELDS, aggregation: str = DEFAULT_AGGREGATION,
               cascade: bool = False) -> RouterConfig:
    """One cell of the grid; its `label` is what tables and figures call it. The grid's cells rank every
    query with every component (no cascade), so that what a component changes shows; the default router
    (with the cascade) is one more cell (`expand_grid`)."""
    if not arm_named(arm).uses_embedder:
        return RouterConfig(arm=arm, fields=tuple(fields))
    return RouterConfig(arm=arm, embedder=embedder, granularity=granularity, fields=tuple(fields),
                        aggregation=aggregation, cascade=cascade)


def representation_labels(embedder: str = "e5-small", retrievers: Sequence[str] = ("dense", "hybrid"),
                          aggregations: Sequence[str] = ("max", "top2", "mean"),
                          fields: Sequence[str] = DEFAULT_FIELDS) -> dict[tuple[str, str, str], str]:
    """{(retriever, representation, aggregation): arm label} of the single vs multi-vector factorial: one
    embedder, the same fields (`breakdowns.representation_table` reads it)."""
    return {(r, g, a): arm_config(r, embedder, g, fields, a).label
            for r in retrievers for g in ("single", "multi") for a in aggregations}


def cards_over_window(catalog, embedder: str = "e5-small", fields: Sequence[str] = DEFAULT_FIELDS) -> list[str]:
    """The tools whose single-vector card text is longer than the embedder reads (its window): where single
    vs multi-vector is confounded with truncation. e5-small's window is `WINDOW_TOKENS` of its tokenizer."""
    from toolroute.embeddings import WINDOW_TOKENS, get_embedder  # loads the model: only when asked
    from toolroute.routing.dense import IndexStrategy, card_records

    model = get_embedder(embedder)
    count = getattr(getattr(model, "_model", None), "token_count", None)
    if count is None:
        raise ValueError(f"{embedder}: no token count to check the window with")
    strategy = IndexStrategy("single", tuple(fields))
    return [card.name for card in catalog if count(card_records(card, strategy)[0].document) > WINDOW_TOKENS]


def arm_settings(config: RouterConfig) -> dict:
    """The grid's own columns of a cell (an arm without an embedder, as BM25, has no granularity either)."""
    lexical = not arm_named(config.arm).uses_embedder
    return {"arm": config.arm, "embedder": "-" if lexical else config.embedder, "granularity": "-" if lexical else config.granularity,
            "fields": tuple(config.fields), "aggregation": config.aggregation, "cascade": config.cascaded}


def expand_grid(embedders: Sequence[str], granularities: Sequence[str], field_sets: Sequence[Sequence[str]],
                arms: Sequence[str], aggregations: Sequence[str] = (DEFAULT_AGGREGATION,),
                default: RouterConfig | None = None) -> list[RouterConfig]:
    """All combinations; an arm without an embedder (BM25) depends on fields only, and aggregation is varied
    on the dense and the default arm alone. With the default router's arm in `arms`, the default router's
    cell (`RouterConfig()`, with the cascade) comes last."""
    specs: list[RouterConfig] = []
    for arm, fields in itertools.product(arms, field_sets):
        if not arm_named(arm).uses_embedder:
            specs.append(arm_config(arm, fields=fields))
            continue
        for embedder, granularity in itertools.product(embedders, granularities):
            specs.append(arm_config(arm, embedder, granularity, fields))
    default = default or arm_config(RouterConfig.arm)
    for agg in aggregations:
        if agg != DEFAULT_AGGREGATION:
            for arm in ("dense", default.arm):
                specs.append(arm_config(arm, default.embedder, default.granularity, default.fields, agg))
    if RouterConfig.arm in arms:
        specs.append(RouterConfig(embedder=RouterConfig().embedder or "e5-small"))
    seen, unique = set(), []
    for s in specs:
        key = s.label
        if key not in seen:
            seen.add(key)
            unique.append(s)
    return unique


@dataclass
class ArmResult:
    spec: RouterConfig
    rows: list[RoutedRow]
    metrics: dict
    ci: dict
    threshold: float | None
    build_seconds: float
    route_ms_per_query: float
    results: list


def run_arm(spec: RouterConfig, domain: str, split: str, ks: Sequence[int], client=None,
            n_boot: int = 2000) -> ArmResult:
    catalog_dir = toolcards_dir(domain)
    config = spec.with_(catalog=str(catalog_dir), dev=str(default_dev_file(catalog_dir)))
    catalog = open_catalog(catalog_dir)
    start = time.perf_counter()
    router = build_router(config, catalog, client=client, progress=False)
    build_seconds = time.perf_counter() - start
    queries = load_queries(queries_path(domain, split), catalog.names)
    start = time.perf_counter()
    results = route_queries(router, queries)
    route_ms = (time.perf_counter() - start) / len(queries) * 1000
    rows = to_rows(queries, results)
    return ArmResult(spec, rows, summarize(rows, ks), bootstrap_ci(rows, ks, n_boot=n_boot),
                     router.no_call_rule.threshold if router.no_call_rule else None,
                     build_seconds, route_ms, results)


def run_grid(specs: Sequence[RouterConfig], domain: str = "insurance", split: str = "test",
             ks: Sequence[int] = DEFAULT_KS, chroma_path: str | Path | None = None,
             progress: bool = True, n_boot: int = 2000) -> dict[str, ArmResult]:
    """Run every arm; one Chroma client is shared (indexes are reused across runs when unchanged)."""
    client = open_client(chroma_path)
    out: dict[str, ArmResult] = {}
    for spec in tqdm(specs, desc=f"ablation ({split})", unit="arm", disable=not progress):
        out[spec.label] = run_arm(spec, domain, split, ks, client, n_boot)
    return out


def results_table(results: dict[str, ArmResult], ks: Sequence[int] = DEFAULT_KS) -> pd.DataFrame:
    """One row per arm: settings, metrics and their 95% CIs (deterministic given the data)."""
    records = []
    for label, r in results.items():
        row = {"arm_label": label, **{k: (",".join(v) if isinstance(v, tuple) else v) for k, v in arm_settings(r.spec).items()}}
        row.update(metric_columns(r.metrics, r.ci, ks))
        row["no_call_threshold"] = r.threshold
        records.append(row)
    return pd.DataFrame.from_records(records)


def timing_table(results: dict[str, ArmResult]) -> pd.DataFrame:
    """Machine-dependent figures, kept apart from the deterministic table."""
    return pd.DataFrame([{"arm_label": k, "build_or_load_s": r.build_seconds, "route_ms_per_query_batched": r.route_ms_per_query}
                         for k, r in results.items()])


def paired_table(results: dict[str, ArmResult], baseline: str,
                 metrics: Sequence[str] = ("hit@1", "right_call", "mrr", "recall@5"),
                 alpha: float = HOLM_ALPHA) -> pd.DataFrame:
    """Each arm minus the baseline on the same queries (paired bootstrap), with Holm's correction over the
    whole table (every arm and metric is one family): `p_holm`, and `holm_reject` (the difference holds at
    family-wise level `alpha`)."""
    base = results[baseline]
    records = []
    for label, r in results.items():
        if label == baseline:
            continue
        for metric in metrics:
            records.append({"arm_label": label, "baseline": baseline, **paired_comparison(base.rows, r.rows, metric)})
    return with_holm(pd.DataFrame.from_records(records), alpha)


def confusion_counts(result: ArmResult, top: int | None = None) -> pd.DataFrame:
    """(expected → predicted top-1) mistakes on single-tool call rows, by count and then by name (all of them
    unless `top`)."""
    counts: dict[tuple[str, str], int] = {}
    for row in result.rows:
        if len(row.expected) == 1 and row.ranked and row.ranked[0] != row.expected[0]:
            key = (row.expected[0], row.ranked[0])
            counts[key] = counts.get(key, 0) + 1
    data = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return pd.DataFrame([{"expected": e, "predicted": p, "count": c} for (e, p), c in data])


def failure_table(result: ArmResult, queries_by_id: dict[str, str]) -> pd.DataFrame:
    """Rows the arm gets wrong at top-1 (or refuses / calls wrongly), with the query text."""
    records = []
    for row, res in zip(result.rows, result.results):
        wrong_call = bool(row.expected) and (not row.ranked or row.ranked[0] not in row.expected)
        wrong_nocall = row.no_call_predicted != (not row.expected)
        if wrong_call or wrong_nocall:
            records.append({"id": row.id, "query": queries_by_id.get(row.id, ""), "expected": ",".join(row.expected) or "(no call)",
                            "top3": ",".join(row.ranked[:3]), "no_call_predicted": row.no_call_predicted,
                            "call_probability": res.call_probability})
    return pd.DataFrame.from_records(records)
