"""The no-call decision: a small logistic rule on routing evidence, fitted on the calib (or dev) split only.

One threshold on the top-1 cosine cannot separate "call a tool" from "no tool": off-domain requests
with generic endings ("…추천해줘", "…짜줘") score as high as real calls with e5-small. The rule
therefore weighs several signals: the dense top-1 score, the top-1/top-2 margin, the best BM25
score and the share of query morphemes the catalogue knows (lexical coverage).

The cut is chosen on out-of-fold probabilities (a rule scored on the rows it was fitted on looks
perfect and cuts too close), and it favours calling: a false "no call" silences the agent's tools
on a real request, while a false "call" only offers the LLM tools it may decline. So the cut keeps
the share of call rows predicted as no-call at or under `max_false_no_call` and, within that,
catches as many no-call rows as it can.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import numpy as np


@dataclass
class NoCallRule:
    """P(call) = sigmoid(w · standardised features + b); predict no call when P(call) < threshold."""

    METHOD = "logistic+oof-bounded-cut"  # part of the calibration key: a new method refits saved rules

    features: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    threshold: float
    fitted_on: str = ""
    dev_balanced_accuracy: float | None = None
    dev_false_no_call_rate: float | None = None
    dev_no_call_accuracy: float | None = None
    max_false_no_call: float | None = None

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
            features: Sequence[str], fitted_on: str = "", max_false_no_call: float = 0.03,
            folds: int = 5, seed: int = 0) -> "NoCallRule":
        """Fit on labelled rows (dev split): logistic weights on all rows, the cut on out-of-fold ones.

        The dev_* fields report the out-of-fold figures at the chosen cut, an honest preview of test.
        """
        from sklearn.model_selection import StratifiedKFold  # heavy (~1 s): only when a rule is fitted

        y = np.asarray(is_call, dtype=int)
        if y.min() == y.max():
            raise ValueError("fitting the no-call rule needs both call and no-call rows in the dev split")
        X = np.array([[row[f] for f in features] for row in feature_rows], dtype=float)
        n_folds = int(min(folds, np.bincount(y).min()))
        oof = np.empty(len(y))
        if n_folds >= 2:
            for train, held in StratifiedKFold(n_folds, shuffle=True, random_state=seed).split(X, y):
                oof[held] = _logistic(X[train], y[train]).predict(X[held])
        else:  # too few no-call rows to hold any out: fall back to in-sample probabilities
            oof = _logistic(X, y).predict(X)
        threshold, stats = _bounded_cut(oof, y, max_false_no_call)
        model = _logistic(X, y)
        return cls(list(features), model.mean, model.scale, model.coef, model.intercept, threshold,
                   fitted_on, stats["balanced_accuracy"], stats["false_no_call_rate"],
                   stats["no_call_accuracy"], max_false_no_call)


@dataclass
class _Fitted:
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float

    def predict(self, X: np.ndarray) -> np.ndarray:
        z = ((X - np.array(self.mean)) / np.array(self.scale)) @ np.array(self.coef) + self.intercept
        return 1.0 / (1.0 + np.exp(-z))


def _logistic(X: np.ndarray, y: np.ndarray) -> _Fitted:
    from sklearn.linear_model import LogisticRegression  # heavy (~1 s): only when a rule is fitted

    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=1.0, class_weight="balanced", max_iter=1000).fit((X - mean) / scale, y)
    return _Fitted(mean.tolist(), scale.tolist(), model.coef_[0].tolist(), float(model.intercept_[0]))


def _bounded_cut(probs: np.ndarray, y: np.ndarray, max_false_no_call: float) -> tuple[float, dict]:
    """The highest cut whose false no-call rate stays within the bound (most no-call rows caught).

    Cuts sit midway between neighbouring probabilities, so the rule does not hug a training row.
    """
    points = np.unique(probs)
    cuts = np.concatenate([[0.0], (points[:-1] + points[1:]) / 2])
    best_cut, best = 0.0, None
    for cut in cuts:
        pred_call = probs >= cut
        fnc = float((~pred_call[y == 1]).mean())
        if fnc > max_false_no_call:
            break  # cuts only grow from here, and so does the false no-call rate
        tnr = float((~pred_call[y == 0]).mean())
        best_cut, best = float(cut), {"false_no_call_rate": fnc, "no_call_accuracy": tnr,
                                      "balanced_accuracy": ((1 - fnc) + tnr) / 2}
    return best_cut, best


def save_rule(path: Path, rule: NoCallRule) -> None:
    """Write the rule as JSON atomically (a reader sees the old file or the new one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(rule.to_dict(), ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def load_rule(path: Path) -> NoCallRule | None:
    """The rule saved at `path`, or None when there is none (or it cannot be read: it is refitted)."""
    try:
        return NoCallRule.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None
