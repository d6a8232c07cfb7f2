"""Run a router over an eval-query file and report in the CLI contract's shape (plus CIs)."""

from __future__ import annotations

from typing import Sequence

from tqdm.auto import tqdm

from toolroute.evaluation.metrics import DEFAULT_KS, RoutedRow, bootstrap_ci, summarize
from toolroute.queries import EvalQuery
from toolroute.routing.history import HistoryRouting
from toolroute.routing.router import RouteResult, ToolRouter


def route_queries(router: ToolRouter, queries: Sequence[EvalQuery], batch: int = 64,
                  progress: bool = False, history: HistoryRouting | None = None) -> list[RouteResult]:
    """Each query routed; a row with `history` is routed by the `history` arm (None: the turn alone)."""
    results: list[RouteResult] = []
    bar = tqdm(total=len(queries), desc=f"routing ({router.arm})", unit="q", disable=not progress)
    for i in range(0, len(queries), batch):
        chunk = queries[i:i + batch]
        if history is None or not any(q.history for q in chunk):
            results.extend(router.route_many([q.query for q in chunk]))
        else:
            results.extend(history.route_many(router, [(q.query, q.history) for q in chunk]))
        bar.update(len(chunk))
    bar.close()
    return results


def to_rows(queries: Sequence[EvalQuery], results: Sequence[RouteResult]) -> list[RoutedRow]:
    return [RoutedRow(q.id, q.expected_tools, tuple(r.top(len(r.ranked))), r.no_call) for q, r in zip(queries, results)]


def rows_of(report: dict) -> list[RoutedRow]:
    """The metric rows of an `evaluate` report made with `keep=None` (every tool of each ranking kept)."""
    return [RoutedRow(r["id"], tuple(r["expected"]), tuple(r["ranked"]), r["no_call_predicted"])
            for r in report["per_query"]]


def evaluate(router: ToolRouter, queries: Sequence[EvalQuery], ks: Sequence[int] = DEFAULT_KS,
             ci: bool = True, keep: int | None = 10, progress: bool = False,
             history: HistoryRouting | None = None) -> dict:
    """Contract report: n, counts, recall@k, mrr, hit@1, no_call_accuracy, right_call (the end-to-end
    decision: the right tool called, or a no-call row refused), threshold, per_query (+ CIs);
    each per_query ranking keeps the `keep` best tools (None: all of them). Rows with `history` are
    routed by the `history` arm; the report then names it (`history_arm`, `n_history`) and each such
    row says what was routed (`history`). A file without history gives the same report as before."""
    results = route_queries(router, queries, progress=progress, history=history)
    rows = to_rows(queries, results)
    metrics = summarize(rows, ks)
    report = {
        "n": len(queries),
        "n_call": sum(q.is_call for q in queries),
        "n_no_call": sum(not q.is_call for q in queries),
        **{f"recall@{k}": metrics[f"recall@{k}"] for k in ks},
        "mrr": metrics["mrr"],
        "hit@1": metrics["hit@1"],
        "no_call_accuracy": metrics["no_call_accuracy"],
        "false_no_call_rate": metrics["false_no_call_rate"],
        "right_call": metrics["right_call"],
        "threshold": router.no_call_rule.threshold if router.no_call_rule else None,
        "no_call_rule": router.no_call_rule.to_dict() if router.no_call_rule else None,
        "arm": router.arm,
        "strategy": router.strategy.label,
        "per_query": [
            {
                "id": q.id,
                "expected": list(q.expected_tools),
                "ranked": r.top(keep),
                "scores": [round(s, 6) for _, s in r.ranked[:keep]],
                "no_call_predicted": r.no_call,
                "call_probability": r.call_probability,
                "kind": q.kind,
                **({"history": r.history} if r.history is not None else {}),
            }
            for q, r in zip(queries, results)
        ],
    }
    n_history = sum(bool(q.history) for q in queries)
    if n_history:
        report["n_history"] = n_history
        report["history_arm"] = history.arm if history is not None else "none"
    if ci:
        report["ci95"] = bootstrap_ci(rows, ks)
    return report


def failures(report: dict, k: int = 1) -> list[dict]:
    """Rows the router got wrong at k: call rows whose expected tools are not all in the top k,
    call rows it refused as no-call, and no-call rows it would have called."""
    out = []
    for row in report["per_query"]:
        if row["expected"]:
            missed = not set(row["expected"]) <= set(row["ranked"][:max(k, len(row["expected"]))])
            if missed or row["no_call_predicted"]:
                out.append({**row, "why": "refused (no-call)" if not missed else f"not in top {k}"})
        elif not row["no_call_predicted"]:
            out.append({**row, "why": "called on a no-call row"})
    return out
