"""The no-call decision: a small logistic rule on routing evidence, fitted on the dev split only.

One threshold on the top-1 cosine cannot separate "call a tool" from "no tool": off-domain requests
with generic endings ("…추천해줘", "…짜줘") score as high as real calls with e5-small. The rule
therefore weighs several signals: the dense top-1 score, the top-1/top-2 margin, the best BM25
score and the share of query morphemes the catalogue knows (lexical coverage).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np


@dataclass
class NoCallRule:
    """P(call) = sigmoid(w · standardised features + b); predict no call when P(call) < threshold."""

    features: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    threshold: float
    fitted_on: str = ""
    dev_balanced_accuracy: float | None = None

    def probability_of_call(self, values: dict[str, float]) -> float:
        x = (np.array([values[f] for f in self.features]) - np.array(self.mean)) / np.array(self.scale)
        z = float(np.dot(self.coef, x) + self.intercept)
        return float(1.0 / (1.0 + np.exp(-z)))

    def predict_no_call(self, values: dict[str, float]) -> bool:
        return self.probability_of_call(values) < self.threshold

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "NoCallRule":
        return cls(**data)

    @classmethod
    def fit(cls, feature_rows: Sequence[dict[str, float]], is_call: Sequence[bool],
            features: Sequence[str], fitted_on: str = "") -> "NoCallRule":
        """Fit on labelled rows (dev split): logistic weights, then the cut that maximises balanced accuracy."""
        from sklearn.linear_model import LogisticRegression

        y = np.asarray(is_call, dtype=int)
        if y.min() == y.max():
            raise ValueError("fitting the no-call rule needs both call and no-call rows in the dev split")
        X = np.array([[row[f] for f in features] for row in feature_rows], dtype=float)
        mean, scale = X.mean(axis=0), X.std(axis=0)
        scale[scale == 0] = 1.0
        model = LogisticRegression(C=1.0, class_weight="balanced", max_iter=1000)
        model.fit((X - mean) / scale, y)
        probs = model.predict_proba((X - mean) / scale)[:, 1]
        threshold, best = _best_cut(probs, y)
        return cls(list(features), mean.tolist(), scale.tolist(), model.coef_[0].tolist(),
                   float(model.intercept_[0]), threshold, fitted_on, best)


def _best_cut(probs: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Cut between two neighbouring probabilities maximising balanced accuracy (midpoint of the best run)."""
    points = np.unique(probs)
    cuts = np.concatenate([[0.0], (points[:-1] + points[1:]) / 2, [1.0]])
    scores = []
    for cut in cuts:
        pred_call = probs >= cut
        tpr = pred_call[y == 1].mean()
        tnr = (~pred_call[y == 0]).mean()
        scores.append((tpr + tnr) / 2)
    scores = np.array(scores)
    best = scores.max()
    best_idx = np.flatnonzero(scores == best)
    return float(cuts[best_idx[len(best_idx) // 2]]), float(best)
