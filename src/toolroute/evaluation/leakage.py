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


def _ratio_at_least(matcher: SequenceMatcher, threshold: float) -> float | None:
    """The matcher's similarity ratio when it reaches `threshold` (its cheap upper bounds tried first), else None."""
    if matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold:
        return None
    ratio = matcher.ratio()
    return ratio if ratio >= threshold else None


def _matched(items: Iterable[tuple[str, str]], others: Iterable[tuple[str, str]]):
    """Every (item, its normalised text, other, its normalised text, a matcher set to compare the two)
    for (id, text) items and others; the matcher holds the item as its second sequence (cached once)."""
    normalized = [(other, normalize_text(other[1])) for other in others]
    for item in items:
        n_item = normalize_text(item[1])
        matcher = SequenceMatcher(autojunk=False)
        matcher.set_seq2(n_item)
        for other, n_other in normalized:
            matcher.set_seq1(n_other)
            yield item, n_item, other, n_other, matcher


def similar_pairs(queries: Iterable[tuple[str, str]], catalog: Catalog,
                  threshold: float = NEAR_DUPLICATE) -> list[LeakPair]:
    """Every (query, when_to_use example) pair at or above `threshold` similarity, most similar first."""
    examples = [(card.name, ex) for card in catalog for ex in card.when_to_use]
    found = []
    for (qid, query), nq, (tool, example), ne, matcher in _matched(queries, examples):
        ratio = 1.0 if ne == nq else _ratio_at_least(matcher, threshold)
        if ratio is not None:
            found.append(LeakPair(qid, query, tool, example, round(ratio, 4)))
    return sorted(found, key=lambda p: -p.similarity)


def nearest_examples(queries: Iterable[tuple[str, str]], catalog: Catalog, top: int = 10) -> list[LeakPair]:
    """The `top` most similar query/example pairs whatever their similarity (for inspection)."""
    return similar_pairs(queries, catalog, threshold=0.0)[:top]


COPIED_BLOCK = 12  # normalised characters in a row shared with a source text: a copied clause, not a common phrase


@dataclass(frozen=True)
class CopiedText:
    where: str  # what holds the text, e.g. "hanbit_auto_premium_quote.description"
    text: str
    source_id: str  # e.g. "card:premium_estimate" or "query:t001"
    source: str
    how: str  # "near-duplicate", "contains" or "shares N characters"


def copied_texts(texts: Iterable[tuple[str, str]], sources: Iterable[tuple[str, str]],
                 threshold: float = NEAR_DUPLICATE, block: int = COPIED_BLOCK) -> list[CopiedText]:
    """Texts (e.g. tool descriptions) that copy a source text (a card example, an eval query), compared in
    `normalize_text` form: the whole text a near-duplicate of the source, the source contained in the text,
    or a run of `block` or more characters shared with it. Unlike `similar_pairs` it catches a source
    pasted into a longer text."""
    found = []
    for (where, text), nt, (sid, src), ns, matcher in _matched(texts, sources):
        if not ns:
            continue
        if ns in nt:
            how = "near-duplicate" if len(ns) >= threshold * len(nt) else "contains"
        elif _ratio_at_least(matcher, threshold) is not None:
            how = "near-duplicate"
        else:
            shared = matcher.find_longest_match(0, len(ns), 0, len(nt)).size
            if shared < block:
                continue
            how = f"shares {shared} characters"
        found.append(CopiedText(where, text, sid, src, how))
    return found
