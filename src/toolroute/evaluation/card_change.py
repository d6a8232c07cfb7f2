"""Before/after routing metrics for a card change, on the dev split, in one call.

A change is scored on its own index namespace (`<catalogue>-eval`), so evaluating an edit never
touches the index a running agent reads, and that namespace is synced in place, so each
evaluation embeds only the records that differ. The test split is refused: cards are tuned on dev
and measured on test, never the other way round.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pandas as pd

from toolroute.cards import Catalog
from toolroute.evaluation.metrics import RoutedRow, paired_comparison, summarize
from toolroute.queries import EvalQuery, load_queries
from toolroute.evaluation.retrieval import route_queries, to_rows
from toolroute.routing import RouterConfig, build_router, default_dev_file

METRICS = ("hit@1", "recall@5", "mrr", "no_call_accuracy", "false_no_call_rate")


@dataclass
class ChangeReport:
    """Metrics before and after, the paired difference, and the rows whose outcome moved."""

    split: str
    n: int
    changed_cards: list[str]
    before: dict[str, float]
    after: dict[str, float]
    paired: dict[str, dict] = field(default_factory=dict)
    moved: list[dict] = field(default_factory=list)  # rows whose top-1 correctness changed
    records_embedded: int = 0
    seconds: float = 0.0

    def table(self) -> pd.DataFrame:
        rows = []
        for m in METRICS:
            p = self.paired.get(m, {})
            rows.append({"metric": m, "before": self.before[m], "after": self.after[m],
                         "delta": self.after[m] - self.before[m],
                         "ci_low": p.get("ci_low"), "ci_high": p.get("ci_high")})
        return pd.DataFrame(rows)

    def text(self) -> str:
        lines = [f"{self.split}: {self.n} queries; changed cards: {', '.join(self.changed_cards) or 'none'}; "
                 f"{self.records_embedded} records embedded, {self.seconds:.1f} s"]
        for _, r in self.table().iterrows():
            ci = f"  [{r.ci_low:+.3f}, {r.ci_high:+.3f}]" if r.ci_low is not None and r.ci_low == r.ci_low else ""
            lines.append(f"  {r.metric:<20} {r.before:.3f} → {r.after:.3f}  ({r.delta:+.3f}){ci}")
        for row in self.moved:
            lines.append(f"  {'fixed ' if row['fixed'] else 'broken'} {row['id']}: {row['query']} "
                         f"(expected {row['expected'] or '[no call]'}; top-3 {row['before']} → {row['after']})")
        return "\n".join(lines)


def changed_cards(before: Catalog, after: Catalog) -> list[str]:
    names = list(dict.fromkeys(before.names + after.names))
    return [n for n in names if before.cards.get(n) != after.cards.get(n)]


def as_eval(catalog: Catalog) -> Catalog:
    """The catalogue renamed `<name>-eval`: its index is a namespace of its own, never a live router's."""
    return catalog.derived(name=f"{catalog.name}-eval", cards=dict(catalog.cards), sources=dict(catalog.sources))


def _top1_right(row: RoutedRow) -> bool:
    if not row.expected:
        return bool(row.no_call_predicted)
    return not row.no_call_predicted and bool(row.ranked) and row.ranked[0] in row.expected


def paired_effects(before: Sequence[RoutedRow], after: Sequence[RoutedRow], k: int = 5) -> dict[str, dict]:
    """After minus before on the same queries: Hit@1, MRR and Recall@k, each with its paired-bootstrap CI."""
    return {m: paired_comparison(before, after, m, ks=(1, k), n_boot=2000) for m in ("hit@1", "mrr", f"recall@{k}")}


def moved_queries(queries: Sequence[EvalQuery], before: Sequence[RoutedRow], after: Sequence[RoutedRow],
                  shown: int = 3) -> list[dict]:
    """The queries whose top-1 correctness changed, each with its top tools before and after."""
    return [{"id": q.id, "query": q.query, "expected": list(q.expected_tools), "fixed": _top1_right(b),
             "before": list(a.ranked[:shown]), "after": list(b.ranked[:shown])}
            for q, a, b in zip(queries, before, after) if _top1_right(a) != _top1_right(b)]


def eval_change(before: Catalog, after: Catalog, queries: str | Path | Sequence[EvalQuery],
                config: RouterConfig = RouterConfig(), client=None, calibration: str | Path | None = None,
                split: str | None = None, embedder=None) -> ChangeReport:
    """Route `queries` with the `before` and the `after` cards and compare (the no-call rule is
    refitted on the calibration file for each side, as a rebuilt router would)."""
    start = time.perf_counter()
    if isinstance(queries, (str, Path)):
        path = Path(queries)
        split = split or path.stem
        if path.stem == "test":
            raise ValueError(f"{path}: card changes are evaluated on dev (or calib), never on the test split")
        queries = load_queries(path, after.names)
    split = split or "queries"
    calibration = calibration or default_dev_file(config.catalog)
    calib = load_queries(calibration, after.names) if calibration else None
    router = build_router(config.with_(embedder=embedder or config.embedder), as_eval(before), client=client,
                          progress=False, no_call="none")
    embedded = router.build_report.embedded if router.build_report else 0
    rows = []
    for side, catalog in enumerate((before, after)):
        if side:
            embedded += router.update_catalog(as_eval(catalog))["records_embedded"]
        router.no_call_rule = None
        if calib:
            router.fit_no_call([q.query for q in calib], [q.is_call for q in calib])
        rows.append(to_rows(queries, route_queries(router, queries)))
    metrics = [summarize(side_rows) for side_rows in rows]
    return ChangeReport(split, len(queries), changed_cards(before, after),
                        {m: metrics[0][m] for m in METRICS}, {m: metrics[1][m] for m in METRICS},
                        paired_effects(rows[0], rows[1], k=5), moved_queries(queries, rows[0], rows[1]), embedded,
                        time.perf_counter() - start)
