"""ToolRouter: a retriever plus the no-call rule; one query in, ranked tools and a decision out.

The retriever (dense, BM25 or hybrid; see `routing.factory`) ranks every tool; the rule reads the
retriever's evidence and decides whether any tool should be called at all.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, Protocol, Sequence, runtime_checkable

from toolroute.cards import Catalog
from toolroute.config import max_query_chars
from toolroute.routing.base import Ranking, Retriever, WeightedQuery
from toolroute.routing.cascade import CascadeRule
from toolroute.routing.dense import IndexStrategy
from toolroute.routing.nocall import NoCallRule


@dataclass
class RouteResult:
    """Every tool ranked best first with its arm score, plus the no-call decision and its evidence."""

    query: str
    ranked: list[tuple[str, float]]
    no_call: bool = False
    call_probability: float | None = None
    features: dict[str, float] = field(default_factory=dict)
    history: dict | None = None  # how earlier turns shaped this ranking (`routing.history`); None: they did not

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
            **({"history": self.history} if self.history is not None else {}),
        }


class ReadWriteLock:
    """Many readers at once or one writer; a waiting writer goes before new readers (so a stream of
    route calls cannot hold an edit back for ever). Not reentrant."""

    def __init__(self):
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._cond:
            while self._writing or self._writers_waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._cond:
            self._writers_waiting += 1
            try:
                while self._writing or self._readers:
                    self._cond.wait()
            finally:
                self._writers_waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()


class QueryTooLong(ValueError):
    """A query past the limit: refused before any tokenising or embedding (a 5 MB query stalled BM25)."""


def _check_lengths(queries: Sequence[str]) -> None:
    limit = max_query_chars()
    for query in queries:
        if len(query) > limit:
            raise QueryTooLong(f"a query of {len(query):,} characters; the limit is {limit:,} (TOOLROUTE_MAX_QUERY_CHARS)")


@runtime_checkable
class Router(Protocol):
    """What the agent needs of a router: the catalogue it ranks and one query → RouteResult."""

    @property
    def catalog(self) -> Catalog: ...

    def route(self, query: str) -> RouteResult: ...


class ToolRouter:
    """Ranks a catalogue's tools with one retriever and decides whether to call any. Build it with
    `routing.build_router`, which also opens the index and loads or fits the rule."""

    def __init__(self, retriever: Retriever, strategy: IndexStrategy, no_call_rule: NoCallRule | None = None):
        self.retriever = retriever
        self.strategy = strategy  # how cards became records (reported with every evaluation)
        self.no_call_rule = no_call_rule
        self.build_report = None  # what the last index build did (set by build())
        # A route reads the indexes under `_indexes.read()`; `update_catalog` switches them under
        # `.write()`, so every route ranks on the old catalogue or the new one, never on a mix.
        self._indexes = ReadWriteLock()
        self._updating = threading.Lock()  # one catalogue update at a time

    @property
    def arm(self) -> str:
        return self.retriever.arm

    @property
    def catalog(self) -> Catalog:
        return self.retriever.catalog

    @property
    def dense(self):
        """The dense arm's ToolIndex, or None for the BM25 arm."""
        dense = getattr(self.retriever, "dense", self.retriever)
        return getattr(dense, "index", None) if dense.arm == "dense" else None

    @property
    def bm25(self):
        """The BM25 arm's index, or None for the dense arm."""
        lexical = getattr(self.retriever, "lexical", self.retriever)
        return lexical.index if lexical.arm == "bm25" else None

    @property
    def embedder(self):
        return self.dense.embedder if self.dense is not None else None

    def build(self, progress: bool = True):
        self.build_report = self.retriever.build(progress=progress)
        return self.build_report

    def update_catalog(self, catalog: Catalog) -> dict:
        """Switch to an edited catalogue in place: changed cards re-embedded, removed tools' vectors
        deleted, BM25 rebuilt (changed cards re-tokenised). The no-call rule is kept (refit it when
        many cards change).

        Atomic for `route`: the changed cards are embedded and tokenised while routes go on with the
        old indexes; then routes wait while the new records are written and the old ones deleted (a
        few milliseconds), so no route sees the dense index with an edited card half written, or the
        new dense index with the old BM25 one.
        """
        with self._updating:
            start = time.perf_counter()
            commit = self.retriever.prepare_catalog(catalog)
            prepared = time.perf_counter()
            with self._indexes.write():
                report = commit()
            done = time.perf_counter()
        embedded = report.embedded if report is not None and hasattr(report, "embedded") else 0
        return {"tools": len(catalog), "records_embedded": embedded, "prepare_seconds": prepared - start,
                "commit_seconds": done - prepared, "dense_seconds": report.seconds if hasattr(report, "seconds") else 0.0,
                "seconds": done - start}

    def over(self, catalog: Catalog) -> "ToolRouter":
        """A built router of this configuration and no-call rule over `catalog` (give it its own name,
        so that its index is a namespace of its own): what this router would do after switching to
        `catalog` with `update_catalog`, which keeps the rule, without touching this one."""
        copy = ToolRouter(self.retriever.over(catalog), self.strategy, self.no_call_rule)
        copy.build(progress=False)
        return copy

    def search(self, queries: dict[str, str], k: int = 10) -> dict[str, dict[str, float]]:
        """The retriever contract (BEIR shape); the no-call rule is not applied here."""
        with self._indexes.read():
            return self.retriever.search(queries, k)

    def route(self, query: str) -> RouteResult:
        return self.route_many([query])[0]

    def route_many(self, queries: Sequence[str]) -> list[RouteResult]:
        _check_lengths(queries)
        with self._indexes.read():
            rankings = self.retriever.rank_many(list(queries))
        return [self._decide(query, ranking) for query, ranking in zip(queries, rankings)]

    def route_weighted(self, queries: Sequence[WeightedQuery]) -> list[RouteResult]:
        """Route queries of several weighted texts (`Retriever.rank_weighted`); each result's `query`
        is the query's first text, and the no-call rule reads the mixed evidence."""
        _check_lengths([text for query in queries for text, _ in query])
        with self._indexes.read():
            rankings = self.retriever.rank_weighted([list(q) for q in queries])
        return [self._decide(query[0][0], ranking) for query, ranking in zip(queries, rankings)]

    def _decide(self, query: str, ranking: Ranking) -> RouteResult:
        result = RouteResult(query, ranking.ranked, features=ranking.features)
        if ranking.features.get("cascade"):  # a decisive BM25 match is a call (see `routing.cascade`)
            result.call_probability, result.no_call = 1.0, False
        elif self.no_call_rule is not None:
            result.call_probability = self.no_call_rule.probability_of_call(ranking.features)
            result.no_call = result.call_probability < self.no_call_rule.threshold
        return result

    @contextmanager
    def _without_cascade(self) -> Iterator[None]:
        """Every query through the full hybrid (fitting reads the dense evidence of every query)."""
        saved = getattr(self.retriever, "cascade", None)
        if saved is not None:
            self.retriever.cascade = None
        try:
            yield
        finally:
            if saved is not None:
                self.retriever.cascade = saved

    def fit_no_call(self, queries: Sequence[str], is_call: Sequence[bool], fitted_on: str = "") -> NoCallRule:
        """Fit the rule on labelled queries (calib or dev, never test) and use it from now on."""
        saved_rule, self.no_call_rule = self.no_call_rule, None
        try:
            with self._without_cascade():
                results = self.route_many(queries)
        finally:
            self.no_call_rule = saved_rule
        self.no_call_rule = NoCallRule.fit([r.features for r in results], is_call, self.retriever.features, fitted_on)
        return self.no_call_rule

    def fit_cascade(self, queries: Sequence[str], expected: Sequence[Sequence[str]], fitted_on: str = "") -> CascadeRule | None:
        """Fit the BM25-first cascade on labelled queries (the tuning splits, never test) and use it from
        now on (None: no cut skips any query, every query goes through the full hybrid)."""
        if not hasattr(self.retriever, "cascade"):
            raise ValueError(f"the cascade needs the hybrid arm, not {self.arm!r}")
        with self._without_cascade():
            results = self.route_many(queries)
        matches = [self.retriever.lexical.matches(q) for q in queries]
        rule = CascadeRule.fit([[s for _, s in m.ranked] for m in matches],
                               [bool(m.ranked) and m.ranked[0][0] in want for m, want in zip(matches, expected)],
                               [r.top(1)[0] in want for r, want in zip(results, expected)],
                               [bool(want) for want in expected], fitted_on)
        self.retriever.cascade = rule
        return rule
