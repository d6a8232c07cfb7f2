"""L3 of the input guardrail, a candidate: logistic regression on the e5 query embedding the L2 gate
already computes, telling injections from legitimate turns.

Fitted on the dev red-team split only: its `injection` rows against its `in_domain_hard` rows and the
dev split's in-domain queries. The threshold is set so that no legitimate turn it was fitted on and
no in-domain query of the calibration split (which it never saw) would be blocked, the same rule as
the L2 gate's (`guardrails.DomainGate.fit`): refusing a customer costs more than one more attack
reaching a model that is instructed and filtered anyway. `cross_validated` reports what it would catch
out of fold, which is how `toolroute.experiments.guard_eval` decides whether it is worth adopting.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from toolroute.config import ROOT, queries_path


@dataclass
class InjectionClassifier:
    embedder: Any
    weights: np.ndarray
    bias: float
    threshold: float
    fitted_on: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        """The probability, per text, that it is an injection."""
        vectors = np.asarray(self.embedder.embed_queries(list(texts)), dtype=np.float32)
        return 1.0 / (1.0 + np.exp(-(vectors @ self.weights + self.bias)))

    def blocks(self, text: str) -> tuple[bool, float]:
        score = float(self.scores([text])[0])
        return score >= self.threshold, score

    @classmethod
    def fit(cls, embedder: Any, injections: Sequence[str], legitimate: Sequence[str],
            calibration: Sequence[str] = (), c: float = 1.0, fitted_on: str = "") -> "InjectionClassifier":
        """Logistic regression (balanced classes) on the embeddings; threshold just above the highest
        score of a legitimate turn (fitted on or calibration)."""
        weights, bias = _logistic(embedder, injections, legitimate, c)
        model = cls(embedder, weights, bias, threshold=1.0, fitted_on=fitted_on)
        negatives = list(legitimate) + list(calibration)
        top = float(model.scores(negatives).max()) if negatives else 0.5
        model.threshold = float(np.nextafter(np.float32(max(top, 0.5)), np.float32(1.0)))
        model.info = {"injections": len(injections), "legitimate": len(legitimate), "calibration": len(calibration), "c": c}
        return model

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "fitted_on": self.fitted_on, **self.info}


def _logistic(embedder: Any, positives: Sequence[str], negatives: Sequence[str], c: float) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression  # heavy (~1 s): only when a classifier is fitted

    x = np.asarray(embedder.embed_queries(list(positives) + list(negatives)), dtype=np.float32)
    y = np.r_[np.ones(len(positives)), np.zeros(len(negatives))]
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=2000).fit(x, y)
    return model.coef_[0].astype(np.float32), float(model.intercept_[0])


def cross_validated(embedder: Any, injections: Sequence[str], legitimate: Sequence[str],
                    calibration: Sequence[str] = (), c: float = 1.0, folds: int = 5, seed: int = 0) -> dict[str, Any]:
    """Out-of-fold decisions of the fitted-and-thresholded classifier: per dev row whether it would be
    blocked by a model that never saw it (the threshold of each fold comes from that fold's training
    rows and the calibration queries). Returns the blocked flags of both classes."""
    from sklearn.model_selection import StratifiedKFold  # heavy (~1 s): only when the classifier is fitted

    texts = list(injections) + list(legitimate)
    labels = np.r_[np.ones(len(injections)), np.zeros(len(legitimate))]
    blocked = np.zeros(len(texts), dtype=bool)
    scores = np.zeros(len(texts))
    for train, held in StratifiedKFold(folds, shuffle=True, random_state=seed).split(texts, labels):
        model = InjectionClassifier.fit(embedder, [texts[i] for i in train if labels[i] == 1],
                                        [texts[i] for i in train if labels[i] == 0], calibration, c)
        fold_scores = model.scores([texts[i] for i in held])
        scores[held] = fold_scores
        blocked[held] = fold_scores >= model.threshold
    return {"injection_blocked": blocked[labels == 1], "legitimate_blocked": blocked[labels == 0],
            "scores": scores, "labels": labels}


def _rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def tuning_data(domain: str = "insurance") -> tuple[list[str], list[str], list[str]]:
    """(injections, legitimate turns, calibration queries): the dev red-team split's injections against
    its in_domain_hard rows and the dev split's in-domain queries (those that expect a tool); the
    calibration split's in-domain queries only set the threshold. The held-out sets are never read."""
    dev = _rows(ROOT / "data" / "redteam" / "dev.jsonl")
    injections = [r["text"] for r in dev if r.get("kind") == "injection"]
    legitimate = [r["text"] for r in dev if r.get("kind") == "in_domain_hard"]
    legitimate += [r["query"] for r in _rows(queries_path(domain, "dev")) if r.get("expected_tools")]
    calibration = [r["query"] for r in _rows(queries_path(domain, "calib")) if r.get("expected_tools")]
    return injections, legitimate, calibration


def fit_on_dev(embedder: Any, domain: str = "insurance", c: float = 1.0) -> InjectionClassifier | None:
    """L3 fitted on `tuning_data`; None when the dev red-team split is missing or was not written for
    `domain` (it is the insurance domain's)."""
    if domain != "insurance":
        return None
    injections, legitimate, calibration = tuning_data(domain)
    if not injections or not legitimate:
        return None
    return InjectionClassifier.fit(embedder, injections, legitimate, calibration, c=c,
                                   fitted_on=f"data/redteam/dev.jsonl + {domain} dev queries (threshold: + calib)")
