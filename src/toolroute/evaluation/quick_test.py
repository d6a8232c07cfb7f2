"""The quick test of seed 002 §7-2: a live router's metrics on one split, before and after a pending card edit.

"Before" is the live router as it is. "After" is a copy of it (`ToolRouter.over`: same arm, embedder,
strategy, fusion weights and no-call rule) over the catalogue with the edit applied, indexed in the
`<catalogue>-eval` namespace that `toolroute cards eval-change` also uses: the live router and its
index are never touched, and once that namespace exists only the edited card's records are embedded.
The no-call rule is kept rather than refitted because that is what the live router does when the
edit is saved. The paired differences and their CIs are those of `cards eval-change`
(`paired_effects`). A pending edit is measured on a tuning split (dev, tune, calib), never on test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from toolroute.cards import Catalog
from toolroute.config import queries_path
from toolroute.evaluation.card_change import as_eval, moved_queries, paired_effects
from toolroute.evaluation.metrics import RoutedRow, row_scores
from toolroute.evaluation.retrieval import evaluate, failures, rows_of
from toolroute.queries import EvalQuery, QueryFileError, load_queries
from toolroute.routing import ToolRouter

SPLITS = ("dev", "tune", "calib", "test")
TUNING_SPLITS = ("dev", "tune", "calib")  # what card edits are measured and proposed on
MAX_FAILURES = 100  # failures listed in a report (all are counted)


class SplitError(ValueError):
    """A split that does not exist, or the test split where only a tuning split may be used."""


def split_queries(domain: str, split: str, known_tools: Iterable[str] | None = None,
                  folder: str | Path | None = None) -> list[EvalQuery]:
    """The eval queries of `split` (`data/<domain>/queries/<split>.jsonl`, or `<folder>/<split>.jsonl`)."""
    if split not in SPLITS:
        raise SplitError(f"unknown split '{split}': use one of {', '.join(SPLITS)}")
    path = Path(folder) / f"{split}.jsonl" if folder is not None else queries_path(domain, split)
    return load_queries(path, known_tools)


def every_split_text(domain: str, known_tools: Iterable[str] | None = None,
                     folder: str | Path | None = None) -> list[str]:
    """The query texts of every split the domain has (what a proposed card line must not resemble)."""
    texts: list[str] = []
    for split in SPLITS:
        try:
            texts += [q.query for q in split_queries(domain, split, known_tools, folder)]
        except QueryFileError:  # a domain without that split
            continue
    return texts


def require_tuning_split(split: str, what: str = "card edits") -> None:
    if split not in TUNING_SPLITS:
        raise SplitError(f"{what} are measured on a tuning split ({', '.join(TUNING_SPLITS)}), "
                         f"never on '{split}': the test split stays unseen until the final report")


@dataclass
class SplitMeasure:
    """One router's metrics on one split, with the rows the paired comparison reads."""

    k: int
    metrics: dict[str, float]
    per_tool: list[dict]
    failures: list[dict]
    rows: list[RoutedRow]


def measure(router: ToolRouter, queries: Sequence[EvalQuery], k: int = 5) -> SplitMeasure:
    """Recall@k, Hit@1, MRR and no-call accuracy; recall@k per expected tool; the top-1 failures."""
    report = evaluate(router, queries, ks=(k,), ci=False, keep=None)
    rows = rows_of(report)
    metrics = {f"recall@{k}": report[f"recall@{k}"], "hit@1": report["hit@1"], "mrr": report["mrr"],
               "no_call_accuracy": report["no_call_accuracy"]}
    recalls: dict[str, list[float]] = {}
    for row in rows:
        for tool in row.expected:
            recalls.setdefault(tool, []).append(row_scores(row, (k,))[f"recall@{k}"])
    per_tool = sorted(({"tool": tool, "n": len(values), "recall": sum(values) / len(values)}
                       for tool, values in recalls.items()), key=lambda t: (t["recall"], t["tool"]))
    texts = {q.id: q.query for q in queries}
    wrong = [{"id": row["id"], "query": texts[row["id"]], "expected": row["expected"], "got": row["ranked"][:3],
              "no_call_predicted": row["no_call_predicted"], "why": row["why"]} for row in failures(report, k=1)]
    return SplitMeasure(k, metrics, per_tool, wrong, rows)


def measure_edit(router: ToolRouter, after: Catalog, queries: Sequence[EvalQuery], before: SplitMeasure
                 ) -> tuple[SplitMeasure, dict[str, Any]]:
    """The split measured on a copy of `router` over `after` (the live router untouched), and the
    paired differences against `before` (measured on `router` over the same queries)."""
    copy = router.over(as_eval(after))
    result = measure(copy, queries, before.k)
    effect = {"paired": paired_effects(before.rows, result.rows, before.k),
              "moved": moved_queries(queries, before.rows, result.rows),
              "records_embedded": copy.build_report.embedded if copy.build_report else 0}
    return result, effect


def quick_test(router: ToolRouter, queries: Sequence[EvalQuery], split: str, k: int = 5,
               after: Catalog | None = None) -> dict[str, Any]:
    """The report `POST /api/eval` returns (NaN, e.g. no-call accuracy on a split without no-call rows,
    becomes None); `after`: the catalogue with a pending edit, measured on a tuning split only."""
    if after is not None:
        require_tuning_split(split, "pending card edits")
    before = measure(router, queries, k)
    report: dict[str, Any] = {
        "split": split, "n": len(queries), "k": k, "before": before.metrics, "per_tool": before.per_tool,
        "n_failures": len(before.failures), "failures": before.failures[:MAX_FAILURES],
        "after": None, "paired": None}
    if after is not None:
        result, effect = measure_edit(router, after, queries, before)
        report.update({"after": result.metrics, "per_tool_after": result.per_tool, **effect})
    return json_safe(report)


def json_safe(value: Any) -> Any:
    """`value` with every NaN or infinity replaced by None (JSON has neither)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value
