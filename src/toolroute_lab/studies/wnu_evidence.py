"""when_not_to_use as negative evidence in retrieval (issue 39, item 1a):
`python -m toolroute_lab.studies.wnu_evidence` (writes `results/wnu_evidence.csv` and `results/wnu_evidence_grid.csv`).

A card's line "… → B" says: a request like this is B's, not mine. Embedded as the card's own text
(02's `+wnu` arms) it pulls such requests *toward* the card that says not to take them. Used as negative
evidence it does the opposite: a query whose similarity to A's line "… → B" exceeds a threshold τ moves B up
and A down by `weight × (similarity − τ) / (1 − τ)` on the default router's fused score (the no-call decision is the
default's, unchanged). The line is embedded without its arrow and tool name.

τ and the weight are chosen on the tuning splits (mean right call over dev and tune, ties to the smaller
weight); calib is then read as a check, test once for the chosen setting. Every split's row gives the
default, the arm, their paired difference (bootstrap 95% CI and p, exact McNemar) for right call and Hit@1,
and how many rows the adjustment changed the top tool of.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from toolroute.cards import Catalog
from toolroute.evaluation.metrics import RoutedRow, mcnemar_exact, paired_comparison, row_scores, summarize
from toolroute.evaluation.retrieval import to_rows
from toolroute.routing.router import RouteResult

THRESHOLDS = (0.78, 0.82, 0.85, 0.88)  # e5 cosines: a query and a line about the same thing are 0.85–0.95
WEIGHTS = (0.01, 0.03, 0.1, 0.3)  # on the fused score, where neighbouring ranks lie ~0.005–0.05 apart
TUNING = ("dev", "tune")
CHECKS = ("calib", "test")


@dataclass(frozen=True)
class Line:
    """One when_not_to_use line: the card it is on, the tool it points to, its text without the arrow."""

    owner: str
    target: str
    text: str


def wnu_lines(catalog: Catalog) -> list[Line]:
    return [Line(card.name, target, text) for card in catalog for text, target in card.redirects()
            if target in catalog.cards and text]


def adjusted(result: RouteResult, similarities: np.ndarray, lines: Sequence[Line], threshold: float,
             weight: float) -> RouteResult:
    """The ranking with each line's evidence applied (see the module doc); the no-call decision kept."""
    scores = dict(result.ranked)
    for line, similarity in zip(lines, similarities):
        push = weight * (float(similarity) - threshold) / (1.0 - threshold)
        if push > 0 and line.target in scores and line.owner in scores:
            scores[line.target] += push
            scores[line.owner] -= push
    ranked = sorted(scores.items(), key=lambda kv: (-round(kv[1], 9), kv[0]))
    return RouteResult(result.query, ranked, result.no_call, result.call_probability, result.features, result.history)


def mean_metric(routed: list[RoutedRow], metric: str) -> float:
    return summarize(routed)[metric]


def compare(split: str, queries, base: list[RouteResult], arm: list[RouteResult], role: str,
            setting: dict) -> list[dict]:
    a, b = to_rows(queries, base), to_rows(queries, arm)
    out = []
    for metric in ("right_call", "hit@1"):
        paired = paired_comparison(a, b, metric, n_boot=2000, seed=0)
        sa = [row_scores(r).get(metric, np.nan) for r in a]
        sb = [row_scores(r).get(metric, np.nan) for r in b]
        keep = [i for i, (x, y) in enumerate(zip(sa, sb)) if not (np.isnan(x) or np.isnan(y))]
        exact = mcnemar_exact([sa[i] for i in keep], [sb[i] for i in keep])
        out.append({"split": split, "role": role, **setting, "metric": metric, "n": paired["n"],
                    "default": mean_metric(a, metric), "wnu_evidence": mean_metric(b, metric), "diff": paired["diff"],
                    "diff_lo": paired["ci_low"], "diff_hi": paired["ci_high"], "p_bootstrap": paired["p_value"],
                    "p_mcnemar": exact["p_mcnemar"], "arm_only": exact["b_only"], "default_only": exact["a_only"],
                    "top1_changed": sum(x.ranked[0] != y.ranked[0] for x, y in zip(a, b) if x.ranked and y.ranked)})
    return out


def main(argv: list[str] | None = None) -> int:
    from toolroute.config import ROOT, queries_path
    from toolroute.queries import load_queries
    from toolroute.routing import RouterConfig, build_router

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    router = build_router(RouterConfig(), progress=False)
    lines = wnu_lines(router.catalog)
    line_vectors = router.embedder.embed_passages([line.text for line in lines])
    routed: dict[str, tuple] = {}
    for split in (*TUNING, *CHECKS):
        queries = load_queries(queries_path("insurance", split))
        results = router.route_many([q.query for q in queries])
        similarities = router.embedder.embed_queries([q.query for q in queries]) @ line_vectors.T
        routed[split] = (queries, results, similarities)
    grid = []
    for threshold in THRESHOLDS:
        for weight in WEIGHTS:
            row = {"threshold": threshold, "weight": weight}
            for split in TUNING:
                queries, results, sims = routed[split]
                arm = [adjusted(r, s, lines, threshold, weight) for r, s in zip(results, sims)]
                row[f"{split}_right_call"] = mean_metric(to_rows(queries, arm), "right_call")
            row["tuning_mean"] = float(np.mean([row[f"{s}_right_call"] for s in TUNING]))
            grid.append(row)
    grid = pd.DataFrame(grid)
    best = grid.sort_values(["tuning_mean", "weight"], ascending=[False, True]).iloc[0]
    setting = {"threshold": float(best["threshold"]), "weight": float(best["weight"])}
    records = []
    for split in (*TUNING, *CHECKS):
        queries, results, sims = routed[split]
        arm = [adjusted(r, s, lines, setting["threshold"], setting["weight"]) for r, s in zip(results, sims)]
        role = "tuning (chose the setting)" if split in TUNING else (
            "check (fits the no-call rule)" if split == "calib" else "test (read once for this setting)")
        records += compare(split, queries, results, arm, role, setting)
    table = pd.DataFrame(records)
    out = ROOT / "results"
    grid.to_csv(out / "wnu_evidence_grid.csv", index=False)
    table.to_csv(out / "wnu_evidence.csv", index=False)
    print(f"{len(lines)} when_not_to_use lines; chosen on {' + '.join(TUNING)}: τ = {setting['threshold']}, "
          f"weight = {setting['weight']}")
    print(table.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
