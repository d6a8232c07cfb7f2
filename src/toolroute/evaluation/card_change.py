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
from toolroute.evaluation.metrics import paired_comparison, summarize
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


def _as_eval(catalog: Catalog) -> Catalog:
    return catalog.derived(name=f"{catalog.name}-eval", cards=dict(catalog.cards), sources=dict(catalog.sources))


def _top1_right(row: dict) -> bool:
    if not row["expected"]:
        return bool(row["no_call_predicted"])
    return not row["no_call_predicted"] and bool(row["ranked"]) and row["ranked"][0] in row["expected"]


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
    router = build_router(config.with_(embedder=embedder or config.embedder), _as_eval(before), client=client,
                          progress=False, no_call="none")
    embedded = router.build_report.embedded if router.build_report else 0
    per_side, rows = [], []
    for side, catalog in enumerate((before, after)):
        if side:
            embedded += router.update_catalog(_as_eval(catalog))["records_embedded"]
        router.no_call_rule = None
        if calib:
            router.fit_no_call([q.query for q in calib], [q.is_call for q in calib])
        results = route_queries(router, queries)
        side_rows = to_rows(queries, results)
        rows.append(side_rows)
        per_side.append((summarize(side_rows), [{"expected": list(q.expected_tools), "ranked": r.top(3),
                                                 "no_call_predicted": r.no_call} for q, r in zip(queries, results)]))
    paired = {m: paired_comparison(rows[0], rows[1], m, n_boot=2000) for m in ("hit@1", "mrr", "recall@5")}
    moved = []
    for q, a, b in zip(queries, per_side[0][1], per_side[1][1]):
        if _top1_right(a) != _top1_right(b):
            moved.append({"id": q.id, "query": q.query, "expected": list(q.expected_tools), "fixed": _top1_right(b),
                          "before": a["ranked"], "after": b["ranked"]})
    return ChangeReport(split, len(queries), changed_cards(before, after),
                        {m: per_side[0][0][m] for m in METRICS}, {m: per_side[1][0][m] for m in METRICS},
                        paired, moved, embedded, time.perf_counter() - start)
