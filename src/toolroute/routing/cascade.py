"""A BM25-first cascade for the hybrid arm: when the lexical match is decisive, the dense pass is skipped.

The query embedding is most of a hybrid route's time (15-25 ms of e5-small on these cores); BM25
takes 1-2 ms. When one tool's BM25 score stands well above the second's, the hybrid's top-1 is
nearly always that tool anyway, and the embedding buys nothing. The rule has two cuts: the second
BM25 score at most `max_ratio` of the first, and the first at least `min_top1`. BM25 scores depend
on the catalogue (its vocabulary and card lengths), so the cuts are fitted on that catalogue's own
labelled queries (the tuning splits, never test), like the no-call rule; a catalogue without
labelled queries gets no cascade.

Fitting picks, among cuts on a grid, the one that skips the most queries while, on the fitting
queries it skips, (a) BM25's top-1 is right at least as often as the hybrid's and (b) no query that
expects no tool is skipped: a skipped query is routed as a call (the no-call rule reads the dense
scores it did not compute).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

RATIOS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def lexical_top_scores(scores: Sequence[float]) -> tuple[float, float]:
    """(first, second) BM25 scores of a lexical ranking (0 where a tool is missing)."""
    values = sorted((float(s) for s in scores), reverse=True) + [0.0, 0.0]
    return values[0], values[1]


@dataclass
class CascadeRule:
    """Skip the dense pass when BM25's second score ≤ `max_ratio` × its first and the first ≥ `min_top1`."""

    METHOD = "bm25-margin-grid"  # part of the saved rule's key: a new method refits

    max_ratio: float
    min_top1: float
    fitted_on: str = ""
    share: float = 0.0  # of the fitting queries skipped
    n: int = 0

    def decisive(self, scores: Sequence[float]) -> bool:
        first, second = lexical_top_scores(scores)
        return first > 0 and first >= self.min_top1 and second <= self.max_ratio * first

    @classmethod
    def fit(cls, lexical_scores: Sequence[Sequence[float]], bm25_right: Sequence[bool], hybrid_right: Sequence[bool],
            is_call: Sequence[bool], fitted_on: str = "") -> "CascadeRule | None":
        """The cut that skips the most fitting queries under the two conditions (module docstring);
        None when no cut skips any query."""
        if not (len(lexical_scores) == len(bm25_right) == len(hybrid_right) == len(is_call)):
            raise ValueError("cascade fit: the query lists differ in length")
        tops = np.array([lexical_top_scores(s) for s in lexical_scores]).reshape(-1, 2)
        bm25_right, hybrid_right, is_call = (np.asarray(x, dtype=bool) for x in (bm25_right, hybrid_right, is_call))
        candidates = sorted({float(v) for v in tops[is_call, 0] if v > 0})
        best: CascadeRule | None = None
        for ratio in RATIOS:
            for min_top1 in candidates:
                skipped = (tops[:, 0] > 0) & (tops[:, 0] >= min_top1) & (tops[:, 1] <= ratio * tops[:, 0])
                if not skipped.any() or (skipped & ~is_call).any():
                    continue
                if bm25_right[skipped].sum() < hybrid_right[skipped].sum():
                    continue
                share = float(skipped.mean())
                if best is None or share > best.share:
                    best = cls(ratio, min_top1, fitted_on, round(share, 4), len(tops))
        return best

    def to_dict(self) -> dict:
        return asdict(self)


def save_cascade(path: Path, rule: CascadeRule | None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(None if rule is None else rule.to_dict(), indent=2), encoding="utf-8")


def load_cascade(path: Path) -> tuple[bool, CascadeRule | None]:
    """(found, rule): a saved "no cut skips anything" is found with rule None."""
    if not path.is_file():
        return False, None
    data = json.loads(path.read_text(encoding="utf-8"))
    return True, None if data is None else CascadeRule(**data)
