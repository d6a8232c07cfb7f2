"""The retriever contract every routing arm implements, in BEIR's shape.

`search({query_id: text}, k) -> {query_id: {tool: score}}` lets any two arms be evaluated, fused or
compared on the same queries. `rank_many` is the same ranking with the evidence the no-call rule
reads (`features`), kept per query.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Sequence

from toolroute.cards import Catalog


# A query of several texts, each with its weight: ((turn, 0.6), (previous user turn, 0.27), …).
WeightedQuery = Sequence[tuple[str, float]]


@dataclass
class Ranking:
    """Every tool a retriever scored for one query, best first, and the evidence it saw."""

    ranked: list[tuple[str, float]]
    features: dict[str, float] = field(default_factory=dict)


class Retriever(ABC):
    """One way of ranking a catalogue's tools for a query (dense, BM25, their fusion)."""

    arm: ClassVar[str]
    features: ClassVar[tuple[str, ...]]  # the evidence names `rank_many` reports, read by the no-call rule

    @property
    @abstractmethod
    def catalog(self) -> Catalog: ...

    @abstractmethod
    def rank_many(self, queries: Sequence[str]) -> list[Ranking]: ...

    def build(self, progress: bool = True):
        """Bring stored indexes in line with the catalogue (nothing to do for in-memory arms)."""
        return None

    @abstractmethod
    def prepare_catalog(self, catalog: Catalog) -> Callable[[], Any]:
        """The slow part of switching to an edited catalogue (embedding, tokenising the changed cards),
        done without changing what a search sees; the returned `commit()` makes the switch (changed
        cards re-indexed, removed tools gone) and is quick. One update at a time (`ToolRouter` holds a
        lock), and nothing else may change the catalogue between the two."""

    def update_catalog(self, catalog: Catalog):
        """Switch to an edited catalogue in place (see `prepare_catalog`)."""
        return self.prepare_catalog(catalog)()

    def fingerprint(self) -> str:
        """What this arm's scores depend on besides the configuration and the cards (e.g. its training
        data): part of the key of the rules fitted on its scores, so that such a change refits them."""
        return ""

    def over(self, catalog: Catalog) -> "Retriever":
        """A new retriever of this one's configuration (embedder, strategy, fusion, Chroma client) over
        `catalog`, not built yet; this one is left as it is."""
        raise NotImplementedError(f"{type(self).__name__} cannot be copied over another catalogue")

    def rank_weighted(self, queries: Sequence[WeightedQuery]) -> list[Ranking]:
        """Rank for queries made of several weighted texts (a turn and the turns before it, see
        `routing.history`): each arm mixes the texts its own way (dense: the weighted mean of their
        vectors; BM25: the weighted sum of their scores), so that no arm reads a history as one text."""
        raise NotImplementedError(f"{type(self).__name__} cannot rank weighted multi-text queries")

    def search(self, queries: dict[str, str], k: int = 10) -> dict[str, dict[str, float]]:
        ids = list(queries)
        rankings = self.rank_many([queries[i] for i in ids])
        return {qid: dict(r.ranked[:k]) for qid, r in zip(ids, rankings)}
