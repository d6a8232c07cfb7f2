"""Would a learned fusion beat RRF? A logistic regression over per-tool evidence (dense multi-vector
score and rank, dense single-vector score and rank, BM25 score and rank, any BM25 match), trained on
tuning splits and compared with the default RRF router on the splits it did not see. Reads dev, tune
and calib only, never test. Prints figures; nothing is asserted or adopted automatically.

    python benchmarks/learned_fusion.py
"""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression

from toolroute.config import queries_path
from toolroute.embeddings import offline_env
from toolroute.queries import load_queries
from toolroute.routing.dense import IndexStrategy, ToolIndex
from toolroute.routing import RouterConfig, build_router

FEATURES = ["dense - best", "1/dense rank", "single - best", "1/single rank", "bm25 / best", "1/bm25 rank",
            "bm25 > 0"]


def _ranks(ranked) -> tuple[dict[str, float], dict[str, int]]:
    return {n: s for n, s in ranked}, {n: i + 1 for i, (n, _) in enumerate(ranked)}


def features(router, single: ToolIndex, query: str) -> np.ndarray:
    """One row per catalogue tool, in catalogue order."""
    dense, dense_rank = _ranks(router.dense.search(query))
    one, one_rank = _ranks(single.search(query))
    scores, _ = router.bm25.scores(query)
    order = np.argsort(-scores, kind="stable")
    bm25_rank = {router.bm25.names[i]: r + 1 for r, i in enumerate(order)}
    bm25 = dict(zip(router.bm25.names, scores.tolist()))
    best_dense, best_one, best_bm25 = max(dense.values()), max(one.values()), max(float(scores.max()), 1e-9)
    return np.array([[dense.get(n, 0.0) - best_dense, 1 / dense_rank.get(n, 99), one.get(n, 0.0) - best_one,
                      1 / one_rank.get(n, 99), bm25.get(n, 0.0) / best_bm25, 1 / bm25_rank.get(n, 99),
                      float(bm25.get(n, 0.0) > 0)] for n in router.catalog.names])


def main() -> None:
    offline_env()
    router = build_router(RouterConfig(), progress=False)
    single = ToolIndex(router.catalog, router.dense.embedder,
                       IndexStrategy(granularity="single", fields=router.strategy.fields), router.dense.client)
    single.build(progress=False)
    names = list(router.catalog.names)
    splits = {}
    for split in ("dev", "tune", "calib"):
        queries = [q for q in load_queries(queries_path("insurance", split), names) if q.expected_tools]
        rows = [features(router, single, q.query) for q in queries]
        gold = [np.array([n in q.expected_tools for n in names], dtype=int) for q in queries]
        rrf = float(np.mean([router.route(q.query).ranked[0][0] in q.expected_tools for q in queries]))
        splits[split] = (rows, gold, rrf)

    def fit(parts, c):
        return LogisticRegression(C=c, max_iter=2000).fit(np.vstack([x for p in parts for x in splits[p][0]]),
                                                          np.concatenate([y for p in parts for y in splits[p][1]]))

    def hit1(model, split) -> float:
        rows, gold, _ = splits[split]
        return float(np.mean([y[np.argmax(model.decision_function(x))] for x, y in zip(rows, gold)]))

    print("Hit@1 on tool-call queries: learned fusion (trained on the other splits) vs the default RRF")
    for train, measured in ((["tune"], "dev"), (["dev"], "tune"), (["dev", "tune"], "calib")):
        for c in (0.1, 1.0):
            model = fit(train, c)
            print(f"  train {'+'.join(train):<8} -> {measured:<5} C={c}: learned {hit1(model, measured):.3f}, "
                  f"RRF {splits[measured][2]:.3f} (n={len(splits[measured][0])})")
    weights = fit(["dev", "tune"], 1.0).coef_[0]
    print("  weights (dev+tune, C=1): " + ", ".join(f"{f} {w:+.2f}" for f, w in zip(FEATURES, weights)))


if __name__ == "__main__":
    main()
