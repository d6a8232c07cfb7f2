"""ToolRouter: one query in, ranked tools and a no-call decision out, by dense, BM25 or hybrid arm.

The hybrid arm fuses the dense and BM25 rankings by reciprocal rank fusion (RRF); the no-call
rule (fitted on the dev split) reads evidence from both arms. Every arm returns the same shape,
so any two can be evaluated, fused or compared on the same queries.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal, Sequence

import numpy as np

from toolroute.cards import Catalog
from toolroute.embeddings import Embedder
from toolroute.index import IndexStrategy, ToolIndex
from toolroute.lexical import BM25ToolIndex
from toolroute.nocall import NoCallRule

Arm = Literal["dense", "bm25", "hybrid"]
ARMS: tuple[str, ...] = ("dense", "bm25", "hybrid")
ARM_FEATURES = {
    "dense": ["dense_top1", "dense_margin"],
    "bm25": ["bm25_top1", "lexical_coverage"],
    "hybrid": ["dense_top1", "dense_margin", "bm25_top1", "lexical_coverage"],
}


@dataclass
class RouteResult:
    """Every tool ranked best first with its arm score, plus the no-call decision and its evidence."""

    query: str
    ranked: list[tuple[str, float]]
    no_call: bool = False
    call_probability: float | None = None
    features: dict[str, float] = field(default_factory=dict)

    def top(self, k: int) -> list[str]:
        return [name for name, _ in self.ranked[:k]]

    def to_dict(self, k: int | None = None) -> dict:
        ranked = self.ranked if k is None else self.ranked[:k]
        return {
            "query": self.query,
            "tools": [{"name": n, "score": round(s, 6)} for n, s in ranked],
            "no_call": self.no_call,
            "call_probability": None if self.call_probability is None else round(self.call_probability, 4),
            "features": {k_: round(v, 6) for k_, v in self.features.items()},
        }


def rrf(rankings: Sequence[Sequence[str]], k: int = 60, weights: Sequence[float] | None = None) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: score(t) = Σ w / (k + rank); tools absent from a ranking get nothing from it."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[str, float] = {}
    for ranking, w in zip(rankings, weights):
        for rank, name in enumerate(ranking, start=1):
            scores[name] = scores.get(name, 0.0) + w / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


class ToolRouter:
    """Ranks a catalogue's tools for a query with one arm and decides whether to call any."""

    def __init__(self, catalog: Catalog, arm: Arm = "hybrid", embedder: Embedder | str | None = None,
                 strategy: IndexStrategy = IndexStrategy(), client=None, rrf_k: int = 60,
                 no_call_rule: NoCallRule | None = None, dense_weight: float = 1.0):
        if arm not in ARMS:
            raise ValueError(f"arm must be one of {ARMS}, got '{arm}'")
        self.catalog = catalog
        self.arm = arm
        self.strategy = strategy
        self.rrf_k = rrf_k
        self.dense_weight = dense_weight  # RRF weight of the dense ranking (BM25's is 1)
        self.dense = ToolIndex(catalog, embedder, strategy, client) if arm != "bm25" else None
        self.bm25 = BM25ToolIndex(catalog, fields=strategy.fields) if arm != "dense" else None
        self.no_call_rule = no_call_rule

    @property
    def setting_key(self) -> str:
        return f"no_call_rule:{self.arm}:{self.strategy.aggregation}:{self.rrf_k}:{self.dense_weight}"

    def build(self, progress: bool = True):
        return self.dense.build(progress=progress) if self.dense else None

    def update_catalog(self, catalog: Catalog) -> dict:
        """Switch to an edited catalogue in place: changed cards re-embedded, removed tools' vectors
        deleted, BM25 rebuilt. The no-call rule is kept (refit it when many cards change)."""
        start = time.perf_counter()
        report = self.dense.sync(catalog) if self.dense else None
        dense_seconds = time.perf_counter() - start
        if self.bm25 is not None:
            self.bm25 = BM25ToolIndex(catalog, fields=self.strategy.fields)
        self.catalog = catalog
        return {"tools": len(catalog), "records_embedded": report.embedded if report else 0,
                "dense_seconds": dense_seconds, "seconds": time.perf_counter() - start}

    def route(self, query: str) -> RouteResult:
        return self.route_many([query])[0]

    def route_many(self, queries: Sequence[str]) -> list[RouteResult]:
        queries = list(queries)
        dense_all = self.dense.search_many(queries) if self.dense else [None] * len(queries)
        results = []
        for query, dense in zip(queries, dense_all):
            features: dict[str, float] = {}
            rankings = []
            if dense is not None:
                features["dense_top1"] = dense[0][1] if dense else 0.0
                features["dense_margin"] = dense[0][1] - dense[1][1] if len(dense) > 1 else features["dense_top1"]
                rankings.append([n for n, _ in dense])
            if self.bm25 is not None:
                scores, tokens = self.bm25.scores(query)
                order = np.argsort(-scores, kind="stable")
                lexical = [(self.bm25.names[i], float(scores[i])) for i in order if scores[i] > 0]
                features["bm25_top1"] = lexical[0][1] if lexical else 0.0
                features["lexical_coverage"] = self.bm25.coverage(tokens)
                rankings.append([n for n, _ in lexical])
            if self.arm == "dense":
                ranked = dense
            elif self.arm == "bm25":
                ranked = lexical + [(n, 0.0) for n in self.catalog.names if n not in {t for t, _ in lexical}]
            else:
                ranked = rrf(rankings, k=self.rrf_k, weights=[self.dense_weight, 1.0])
            result = RouteResult(query, ranked, features=features)
            if self.no_call_rule is not None:
                result.call_probability = self.no_call_rule.probability_of_call(features)
                result.no_call = result.call_probability < self.no_call_rule.threshold
            results.append(result)
        return results

    # ----- the no-call rule ------------------------------------------------------------------
    def fit_no_call(self, queries: Sequence[str], is_call: Sequence[bool], fitted_on: str = "",
                    save: bool = True) -> NoCallRule:
        """Fit the rule on labelled (dev) queries and save it with the index config."""
        saved_rule, self.no_call_rule = self.no_call_rule, None
        try:
            results = self.route_many(queries)
        finally:
            self.no_call_rule = saved_rule
        rule = NoCallRule.fit([r.features for r in results], is_call, ARM_FEATURES[self.arm], fitted_on)
        self.no_call_rule = rule
        if save and self.dense is not None:
            self.dense.save_setting(self.setting_key, {**rule.to_dict()})
        return rule

    def load_no_call(self, fitted_on: str | None = None) -> NoCallRule | None:
        """The rule saved with the live index, if any (and, when given, fitted on that file)."""
        if self.dense is None:
            return None
        data = self.dense.load_setting(self.setting_key)
        if data and (fitted_on is None or data.get("fitted_on") == fitted_on):
            self.no_call_rule = NoCallRule.from_dict(data)
            return self.no_call_rule
        return None
