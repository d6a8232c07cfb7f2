"""The lexical arm: Korean morphological tokens (kiwipiepy) scored with BM25 (bm25s).

Short Korean queries full of product names and terms (e.g. "실버치아 임플란트 한도") are where dense
models slip; BM25 over morphemes matches them exactly. Particles and endings are dropped so that
"보험료는" and "보험료를" count as the same word.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

import bm25s
import numpy as np

from toolroute.cards import Catalog, ToolCard
from toolroute.routing.base import Ranking, Retriever, WeightedQuery

# Content morphemes: nouns, numbers, foreign words, roots, verb and adjective stems.
_CONTENT_TAGS = ("NNG", "NNP", "NR", "SL", "SH", "SN", "XR", "VV", "VA")
_CODE = re.compile(r"[A-Za-z]+\d+")


@lru_cache(maxsize=1)
def _kiwi():
    from kiwipiepy import Kiwi  # heavy: the Korean model loads in ~1.3 s, on first BM25 use

    return Kiwi()


def tokenize_korean(text: str) -> list[str]:
    """Content morphemes of `text` (lower-cased), plus whole product codes such as `B010`."""
    return list(_tokenize_remembered(text))


@lru_cache(maxsize=2048)
def _tokenize_remembered(text: str) -> tuple[str, ...]:
    """A served follow-up is routed with the earlier turns of its thread (`routing.history`): each
    would be tokenised again on every turn; Kiwi holds the GIL that other turns wait for."""
    tokens = [t.form.lower() for t in _kiwi().tokenize(text) if t.tag.startswith(_CONTENT_TAGS)]
    tokens.extend(code.lower() for code in _CODE.findall(text))
    return tuple(tokens)


def card_text(card: ToolCard, fields: Sequence[str]) -> str:
    """One document per tool: the chosen fields joined (BM25 wants the whole vocabulary of a tool)."""
    parts: list[str] = []
    for field in fields:
        value = getattr(card, field)
        parts.extend([value] if isinstance(value, str) else list(value))
    return "\n".join(parts)


class BM25ToolIndex:
    """BM25 over one document per tool; cheap enough to rebuild in memory from the cards (~50 ms at 54
    tools). Tokenising is the costly part at scale: `tokens` (document text → its tokens, e.g. the
    previous index's `tokens`) is reused, so a rebuild after a card edit tokenises only that card."""

    def __init__(self, catalog: Catalog, fields: Sequence[str] = ("purpose", "when_to_use", "tags"),
                 k1: float = 1.5, b: float = 0.75, tokens: dict[str, list[str]] | None = None):
        self.names = catalog.names
        self.fields = tuple(fields)
        known = tokens or {}
        texts = [card_text(card, self.fields) for card in catalog]
        self.tokens = {text: known[text] if text in known else tokenize_korean(text) for text in texts}
        corpus = [self.tokens[text] for text in texts]
        self.vocabulary = {tok for doc in corpus for tok in doc}
        self._bm25 = bm25s.BM25(k1=k1, b=b)
        self._bm25.index([doc or ["∅"] for doc in corpus], show_progress=False)

    def scores(self, query: str) -> tuple[np.ndarray, list[str]]:
        """BM25 score of every tool (catalogue order) and the query's tokens."""
        tokens = tokenize_korean(query)
        known = [t for t in tokens if t in self.vocabulary]
        if not known:
            return np.zeros(len(self.names), dtype=np.float32), tokens
        return np.asarray(self._bm25.get_scores(known), dtype=np.float32), tokens

    def coverage(self, tokens: Sequence[str]) -> float:
        """Share of the query's content tokens the catalogue knows: low for off-domain requests."""
        if not tokens:
            return 0.0
        return sum(t in self.vocabulary for t in tokens) / len(tokens)


class BM25Retriever(Retriever):
    """The lexical arm: tools with a positive BM25 score first, then the rest in catalogue order."""

    arm = "bm25"
    features = ("bm25_top1", "lexical_coverage")

    def __init__(self, catalog: Catalog, fields: Sequence[str] = ("purpose", "when_to_use", "tags")):
        self.fields = tuple(fields)
        self.index = BM25ToolIndex(catalog, fields=self.fields)
        self._catalog = catalog

    @property
    def catalog(self) -> Catalog:
        return self._catalog

    def prepare_catalog(self, catalog: Catalog):
        index = BM25ToolIndex(catalog, fields=self.fields, tokens=self.index.tokens)

        def commit() -> None:
            self.index, self._catalog = index, catalog

        return commit

    def over(self, catalog: Catalog) -> "BM25Retriever":
        return BM25Retriever(catalog, self.fields)

    def matches(self, query: str) -> Ranking:
        """Only the tools sharing a word with the query (what fusion reads), with the lexical evidence."""
        scores, tokens = self.index.scores(query)
        order = np.argsort(-scores, kind="stable")
        lexical = [(self.index.names[i], float(scores[i])) for i in order if scores[i] > 0]
        return Ranking(lexical, {"bm25_top1": lexical[0][1] if lexical else 0.0,
                                 "lexical_coverage": self.index.coverage(tokens)})

    def matches_weighted(self, query: WeightedQuery) -> Ranking:
        """`matches` for a query of weighted texts: the weighted sum of their BM25 scores; the
        coverage evidence is the weighted mean of theirs."""
        total = np.zeros(len(self.index.names), dtype=np.float64)
        coverage = weight_sum = 0.0
        for text, weight in query:
            scores, tokens = self.index.scores(text)
            total += weight * scores
            coverage += weight * self.index.coverage(tokens)
            weight_sum += weight
        order = np.argsort(-total, kind="stable")
        lexical = [(self.index.names[i], float(total[i])) for i in order if total[i] > 0]
        return Ranking(lexical, {"bm25_top1": lexical[0][1] if lexical else 0.0,
                                 "lexical_coverage": coverage / weight_sum if weight_sum else 0.0})

    def rank_many(self, queries: Sequence[str]) -> list[Ranking]:
        return [self._complete(self.matches(query)) for query in queries]

    def rank_weighted(self, queries: Sequence[WeightedQuery]) -> list[Ranking]:
        return [self._complete(self.matches_weighted(query)) for query in queries]

    def _complete(self, ranking: Ranking) -> Ranking:
        """The tools BM25 did not match appended in catalogue order (score 0), so every tool is ranked."""
        found = {t for t, _ in ranking.ranked}
        ranking.ranked += [(n, 0.0) for n in self.catalog.names if n not in found]
        return ranking
