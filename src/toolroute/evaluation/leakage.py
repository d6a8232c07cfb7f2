"""Leakage between eval queries and card examples: exact and near-duplicate, after normalisation.

An evaluation is only worth its numbers if its queries were not copied from the cards (the seed's
test set mostly was). Texts are compared in `normalize_text` form (NFKC, lower case, letters and
digits only); a pair is a near-duplicate when difflib's similarity ratio reaches `NEAR_DUPLICATE`.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Iterable

from toolroute.cards import NEAR_DUPLICATE, Catalog, normalize_text


@dataclass(frozen=True)
class LeakPair:
    query_id: str
    query: str
    tool: str
    example: str
    similarity: float

    @property
    def exact(self) -> bool:
        return self.similarity >= 1.0


def similar_pairs(queries: Iterable[tuple[str, str]], catalog: Catalog,
                  threshold: float = NEAR_DUPLICATE) -> list[LeakPair]:
    """Every (query, when_to_use example) pair at or above `threshold` similarity, most similar first."""
    examples = [(card.name, ex, normalize_text(ex)) for card in catalog for ex in card.when_to_use]
    found = []
    for qid, query in queries:
        nq = normalize_text(query)
        matcher = SequenceMatcher(autojunk=False)
        matcher.set_seq2(nq)
        for tool, example, ne in examples:
            if ne == nq:
                found.append(LeakPair(qid, query, tool, example, 1.0))
                continue
            matcher.set_seq1(ne)
            if matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold:
                continue
            ratio = matcher.ratio()
            if ratio >= threshold:
                found.append(LeakPair(qid, query, tool, example, round(ratio, 4)))
    return sorted(found, key=lambda p: -p.similarity)


def nearest_examples(queries: Iterable[tuple[str, str]], catalog: Catalog, top: int = 10) -> list[LeakPair]:
    """The `top` most similar query/example pairs whatever their similarity (for inspection)."""
    return similar_pairs(queries, catalog, threshold=0.0)[:top]
