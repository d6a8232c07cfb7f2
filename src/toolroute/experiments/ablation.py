"""The ToolCard ablation grid: strategy × fields × embedder × arm (× aggregation), on one split.

Each arm is built (index incremental), its no-call rule fitted on the dev split only, then measured
on the chosen split with bootstrap CIs; paired comparisons against the default arm say which
differences are real.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import pandas as pd
from tqdm.auto import tqdm

from toolroute.config import queries_path, toolcards_dir
from toolroute.evaluation.metrics import DEFAULT_KS, RoutedRow, bootstrap_ci, paired_comparison, summarize
from toolroute.evaluation.queries import load_queries
from toolroute.evaluation.retrieval import route_queries, to_rows
from toolroute.index import DEFAULT_FIELDS, open_client
from toolroute.routing import RouterConfig, build_router, open_catalog, default_dev_file

DEFAULT_AGGREGATION = RouterConfig.aggregation


@dataclass(frozen=True)
class ArmSpec:
    """One cell of the grid; `label` is what tables and figures call it."""

    arm: str
    embedder: str = "e5-small"
    granularity: str = "multi"
    fields: tuple[str, ...] = DEFAULT_FIELDS
    aggregation: str = DEFAULT_AGGREGATION

    @property
    def label(self) -> str:
        wnu = "+wnu" if "when_not_to_use" in self.fields else ""
        if self.arm == "bm25":
            return f"bm25{wnu}"
        return f"{self.arm}:{self.embedder}:{self.granularity}{wnu}/{self.aggregation}"


def expand_grid(embedders: Sequence[str], granularities: Sequence[str], field_sets: Sequence[Sequence[str]],
                arms: Sequence[str], aggregations: Sequence[str] = (DEFAULT_AGGREGATION,),
                default: ArmSpec | None = None) -> list[ArmSpec]:
    """All combinations; BM25 depends on fields only, and aggregation is varied on the default arm alone."""
    specs: list[ArmSpec] = []
    for arm, fields in itertools.product(arms, field_sets):
        if arm == "bm25":
            specs.append(ArmSpec("bm25", "-", "-", tuple(fields)))
            continue
        for embedder, granularity in itertools.product(embedders, granularities):
            specs.append(ArmSpec(arm, embedder, granularity, tuple(fields)))
    default = default or ArmSpec("hybrid")
    for agg in aggregations:
        if agg != DEFAULT_AGGREGATION:
            for arm in ("dense", default.arm):
                specs.append(ArmSpec(arm, default.embedder, default.granularity, default.fields, agg))
    seen, unique = set(), []
    for s in specs:
        if s not in seen:
            seen.add(s)
            unique.append(s)
    return unique


@dataclass
class ArmResult:
    spec: ArmSpec
    rows: list[RoutedRow]
    metrics: dict
    ci: dict
    threshold: float | None
    build_seconds: float
    route_ms_per_query: float
    results: list


def run_arm(spec: ArmSpec, domain: str, split: str, ks: Sequence[int], client=None,
            n_boot: int = 2000) -> ArmResult:
    catalog_dir = toolcards_dir(domain)
    config = RouterConfig(catalog=str(catalog_dir), arm=spec.arm,
                          granularity=spec.granularity if spec.arm != "bm25" else "multi",
                          fields=spec.fields, aggregation=spec.aggregation,
                          embedder=None if spec.embedder == "-" else spec.embedder,
                          dev=str(default_dev_file(catalog_dir)))
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


def run_grid(specs: Sequence[ArmSpec], domain: str = "insurance", split: str = "test",
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
        row = {"arm_label": label, **{k: (",".join(v) if isinstance(v, tuple) else v) for k, v in asdict(r.spec).items()}}
        for key in [f"recall@{k}" for k in ks] + ["hit@1", "mrr", "no_call_accuracy", "false_no_call_rate"]:
            row[key] = r.metrics[key]
            row[f"{key}_lo"], row[f"{key}_hi"] = r.ci[key]
        row["no_call_threshold"] = r.threshold
        records.append(row)
    return pd.DataFrame.from_records(records)


def timing_table(results: dict[str, ArmResult]) -> pd.DataFrame:
    """Machine-dependent figures, kept apart from the deterministic table."""
    return pd.DataFrame([{"arm_label": k, "build_or_load_s": r.build_seconds, "route_ms_per_query_batched": r.route_ms_per_query}
                         for k, r in results.items()])


def paired_table(results: dict[str, ArmResult], baseline: str, metrics: Sequence[str] = ("hit@1", "mrr", "recall@5")) -> pd.DataFrame:
    """Each arm minus the baseline on the same queries (paired bootstrap)."""
    base = results[baseline]
    records = []
    for label, r in results.items():
        if label == baseline:
            continue
        for metric in metrics:
            records.append({"arm_label": label, "baseline": baseline, **paired_comparison(base.rows, r.rows, metric)})
    return pd.DataFrame.from_records(records)


def confusion_counts(result: ArmResult, top: int = 15) -> pd.DataFrame:
    """Most frequent (expected → predicted top-1) mistakes on single-tool call rows."""
    counts: dict[tuple[str, str], int] = {}
    for row in result.rows:
        if len(row.expected) == 1 and row.ranked and row.ranked[0] != row.expected[0]:
            key = (row.expected[0], row.ranked[0])
            counts[key] = counts.get(key, 0) + 1
    data = sorted(counts.items(), key=lambda kv: -kv[1])[:top]
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
