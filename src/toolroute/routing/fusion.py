"""The hybrid arm: dense and BM25 rankings fused by reciprocal rank fusion (RRF).

Dense models slip on short queries full of product names and terms, BM25 on paraphrases; RRF
needs no score calibration between the two, only ranks.
"""

from __future__ import annotations

from typing import Sequence

from toolroute.cards import Catalog
from toolroute.routing.base import Ranking, Retriever, WeightedQuery
from toolroute.routing.cascade import CascadeRule
from toolroute.routing.dense import DenseRetriever
from toolroute.routing.lexical import BM25Retriever


def rrf(rankings: Sequence[Sequence[str]], k: int = 60, weights: Sequence[float] | None = None) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: score(t) = Σ w / (k + rank); tools absent from a ranking get nothing from it."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[str, float] = {}
    for ranking, w in zip(rankings, weights):
        for rank, name in enumerate(ranking, start=1):
            scores[name] = scores.get(name, 0.0) + w / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


class HybridRetriever(Retriever):
    """RRF of the dense ranking (weight `dense_weight`) and the tools BM25 matched (weight 1). With a
    `cascade` rule, a query whose BM25 match is decisive is ranked by BM25 alone (`routing.cascade`)."""

    arm = "hybrid"
    features = DenseRetriever.features + BM25Retriever.features

    def __init__(self, dense: DenseRetriever, lexical: BM25Retriever, rrf_k: int = 60, dense_weight: float = 1.0,
                 cascade: CascadeRule | None = None):
        self.dense, self.lexical = dense, lexical
        self.rrf_k, self.dense_weight = rrf_k, dense_weight
        self.cascade = cascade

    @property
    def catalog(self) -> Catalog:
        return self.dense.catalog

    def build(self, progress: bool = True):
        return self.dense.build(progress=progress)

    def prepare_catalog(self, catalog: Catalog):
        dense, lexical = self.dense.prepare_catalog(catalog), self.lexical.prepare_catalog(catalog)

        def commit():
            report = dense()
            lexical()
            return report

        return commit

    def over(self, catalog: Catalog) -> "HybridRetriever":
        return HybridRetriever(self.dense.over(catalog), self.lexical.over(catalog), self.rrf_k, self.dense_weight)

    def rank_many(self, queries: Sequence[str]) -> list[Ranking]:
        lexical = [self.lexical.matches(query) for query in queries]
        decided = [self.cascade is not None and self.cascade.decisive([s for _, s in m.ranked]) for m in lexical]
        dense = iter(self.dense.rank_many([q for q, skip in zip(queries, decided) if not skip]))
        return [self._lexical_only(match) if skip else self._fuse(next(dense), match)
                for match, skip in zip(lexical, decided)]

    def rank_weighted(self, queries: Sequence[WeightedQuery]) -> list[Ranking]:
        """Weighted queries (a turn with its history) always take the full hybrid: the cascade's cuts
        were fitted on single turns."""
        return [self._fuse(dense, self.lexical.matches_weighted(query))
                for query, dense in zip(queries, self.dense.rank_weighted(queries))]

    def _fuse(self, dense: Ranking, lexical: Ranking) -> Ranking:
        ranked = rrf([[n for n, _ in dense.ranked], [n for n, _ in lexical.ranked]], k=self.rrf_k,
                     weights=[self.dense_weight, 1.0])
        return Ranking(ranked, {**dense.features, **lexical.features})

    def _lexical_only(self, match: Ranking) -> Ranking:
        """A decisive BM25 match: its tools by RRF of the BM25 ranking alone, then the rest of the
        catalogue; `cascade` in the features tells the router the dense scores were not computed."""
        ranked = rrf([[n for n, _ in match.ranked]], k=self.rrf_k)
        seen = {n for n, _ in ranked}
        ranked += [(n, 0.0) for n in self.catalog.names if n not in seen]
        return Ranking(ranked, {**match.features, "cascade": 1.0})
