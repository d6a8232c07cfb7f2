"""The hybrid and the classifier together: their rankings fused by reciprocal rank fusion (issue 40).

The hybrid ranks by the cards' text and holds for a tool that has only its card; the classifier
(`routing.learned`) learns from the synthetic queries what a card's few lines cannot show, and slips
where its training set is thin. Measured apart on the tuning splits each wins rows the other loses, so
their RRF is an arm of its own. A query the cascade decides on BM25 alone keeps that decision (the fast
path stays fast); every other query gets both rankings. The query is embedded once: the embedder
remembers the last single queries (`embeddings._RecentQueries`).
"""

from __future__ import annotations

from typing import Callable, Sequence

from toolroute.cards import Catalog
from toolroute.routing.base import Ranking, Retriever, WeightedQuery
from toolroute.routing.fusion import HybridRetriever, rrf
from toolroute.routing.learned import ClassifierRetriever


class EnsembleRetriever(Retriever):
    """RRF of the hybrid's ranking (weight 1) and the classifier's (weight `classifier_weight`)."""

    arm = "hybrid+classifier"
    features = HybridRetriever.features + ClassifierRetriever.features

    def __init__(self, hybrid: HybridRetriever, classifier: ClassifierRetriever, rrf_k: int = 10,
                 classifier_weight: float = 1.0):
        self.hybrid, self.classifier = hybrid, classifier
        self.rrf_k, self.classifier_weight = rrf_k, classifier_weight

    @property
    def cascade(self):
        return self.hybrid.cascade

    @cascade.setter
    def cascade(self, rule) -> None:  # the router fits and switches the hybrid's cascade through its retriever
        self.hybrid.cascade = rule

    @property
    def dense(self):
        """The hybrid's dense arm (its index: what the router reports and rebuilds)."""
        return self.hybrid.dense

    @property
    def lexical(self):
        """The BM25 pass the cascade is fitted on (the hybrid's)."""
        return self.hybrid.lexical

    @property
    def catalog(self) -> Catalog:
        return self.hybrid.catalog

    def fingerprint(self) -> str:
        return f"ensemble|w={self.classifier_weight}|k={self.rrf_k}|{self.classifier.fingerprint()}"

    def build(self, progress: bool = True):
        report = self.hybrid.build(progress=progress)
        self.classifier.build(progress=progress)
        return report

    def prepare_catalog(self, catalog: Catalog) -> Callable[[], object]:
        hybrid, classifier = self.hybrid.prepare_catalog(catalog), self.classifier.prepare_catalog(catalog)

        def commit():
            report = hybrid()
            classifier()
            return report

        return commit

    def over(self, catalog: Catalog) -> "EnsembleRetriever":
        return EnsembleRetriever(self.hybrid.over(catalog), self.classifier.over(catalog), self.rrf_k,
                                 self.classifier_weight)

    def rank_many(self, queries: Sequence[str]) -> list[Ranking]:
        hybrid = self.hybrid.rank_many(queries)
        open_rows = [i for i, ranking in enumerate(hybrid) if not ranking.features.get("cascade")]
        learned = dict(zip(open_rows, self.classifier.rank_many([queries[i] for i in open_rows])))
        return [self._fuse(ranking, learned[i]) if i in learned else ranking for i, ranking in enumerate(hybrid)]

    def rank_weighted(self, queries: Sequence[WeightedQuery]) -> list[Ranking]:
        return [self._fuse(h, c) for h, c in zip(self.hybrid.rank_weighted(queries),
                                                 self.classifier.rank_weighted(queries))]

    def _fuse(self, hybrid: Ranking, learned: Ranking) -> Ranking:
        ranked = rrf([[n for n, _ in hybrid.ranked], [n for n, _ in learned.ranked]], k=self.rrf_k,
                     weights=[1.0, self.classifier_weight])
        return Ranking(ranked, {**hybrid.features, **learned.features})
