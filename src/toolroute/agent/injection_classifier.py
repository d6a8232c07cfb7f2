"""L3 of the input guardrail: logistic regression on the e5 query embedding the L2 gate already
computes, plus character n-grams of the NFKC-folded text, telling injections from legitimate turns.

Fitted on tuning red-team splits only (`data/redteam/dev.jsonl`, `train.jsonl` and
`hard_legit_tune.jsonl`, three writers who read neither the rules nor the held-out sets; not the
fourth tuning set, `hard_legit_tune2.jsonl`, see `CLASSIFIER_SETS`): their
`injection` rows against their `in_domain_hard` rows and the dev split's in-domain queries. The
hard legitimate turns (own-policy instructions, revised quotes, callback notes, job titles, English
turns with "ignore" or "system") joined as negatives after the first version blocked 18 of them out
of fold; out of fold they then cost 4 of the 337 tuning injections (`guard_eval.classifier_on_dev`). The character n-grams carry what the
sentence embedding blurs (a persona's name, "프롬프트", a base64 run, full-width or spaced letters);
measured across writers (fitted on one tuning set, validated on the other), they raise what the stack
blocks on the unseen writer's attacks from 0.745 to 0.838 (`guard_eval.l3_selection`, docs/agent.md). The threshold is set so
that no legitimate turn it was fitted on and no in-domain query of the calibration split (which it
never saw) would be blocked, the same rule as the L2 gate's (`guardrails.DomainGate.fit`): refusing a
customer costs more than one more attack reaching a model that is instructed and filtered anyway.
`cross_validated` reports what it would catch out of fold.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from toolroute.config import ROOT, queries_path

# data/redteam/: every tuning set (never a held-out one); the L2 gate's consultation turns come from all of them
TUNING_SETS = ("dev.jsonl", "train.jsonl", "hard_legit_tune.jsonl", "hard_legit_tune2.jsonl")
# what L3 is fitted on: not hard_legit_tune2. Learnt as more negatives, its 150 turns raised the threshold and the
# stack blocked 204 instead of 214 of train's 235 injections out of fold (`guard_eval --cv`), while L3 fitted
# without them blocked 1 of the 150 (a writer it never saw).
CLASSIFIER_SETS = ("dev.jsonl", "train.jsonl", "hard_legit_tune.jsonl")
C = 16.0  # chosen across writers: fitted on dev, validated on train (and the reverse), never on held-out


def folded(text: str) -> str:
    """NFKC (full-width letters and digits become ASCII) and lower case: what the n-grams read."""
    return unicodedata.normalize("NFKC", text).lower()


@dataclass
class InjectionClassifier:
    embedder: Any
    weights: np.ndarray
    bias: float
    threshold: float
    fitted_on: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    ngrams: Any = None  # a fitted TfidfVectorizer over character 1-4-grams, or None (embedding only)

    def features(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.asarray(self.embedder.embed_queries(list(texts)), dtype=np.float32)
        if self.ngrams is None:
            return vectors
        return np.hstack([vectors, self.ngrams.transform(list(texts)).toarray().astype(np.float32)])

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        """The probability, per text, that it is an injection."""
        return 1.0 / (1.0 + np.exp(-(self.features(texts) @ self.weights + self.bias)))

    def blocks(self, text: str) -> tuple[bool, float]:
        score = float(self.scores([text])[0])
        return score >= self.threshold, score

    @classmethod
    def fit(cls, embedder: Any, injections: Sequence[str], legitimate: Sequence[str],
            calibration: Sequence[str] = (), c: float = C, fitted_on: str = "",
            char_ngrams: bool = True) -> "InjectionClassifier":
        """Logistic regression (balanced classes) on the features; threshold just above the highest
        score of a legitimate turn (fitted on or calibration)."""
        model = cls(embedder, np.zeros(0, dtype=np.float32), 0.0, threshold=1.0, fitted_on=fitted_on)
        texts = list(injections) + list(legitimate)
        if char_ngrams:
            model.ngrams = _ngram_vectorizer().fit(texts)
        model.weights, model.bias = _logistic(model.features(texts), len(injections), c)
        negatives = list(legitimate) + list(calibration)
        top = float(model.scores(negatives).max()) if negatives else 0.5
        model.threshold = float(np.nextafter(np.float32(max(top, 0.5)), np.float32(1.0)))
        model.info = {"injections": len(injections), "legitimate": len(legitimate), "calibration": len(calibration),
                      "c": c, "features": "e5 + character 1-4-grams" if char_ngrams else "e5"}
        return model

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "fitted_on": self.fitted_on, **self.info}


def _ngram_vectorizer() -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer  # heavy (~1 s): only when a classifier is fitted

    return TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 4), preprocessor=folded, sublinear_tf=True,
                           min_df=2, dtype=np.float32)


def _logistic(x: np.ndarray, positives: int, c: float) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression  # heavy (~1 s): only when a classifier is fitted

    y = np.r_[np.ones(positives), np.zeros(len(x) - positives)]
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=4000).fit(x, y)
    return model.coef_[0].astype(np.float32), float(model.intercept_[0])


def cross_validated(embedder: Any, injections: Sequence[str], legitimate: Sequence[str],
                    calibration: Sequence[str] = (), c: float = C, folds: int = 5, seed: int = 0,
                    char_ngrams: bool = True) -> dict[str, Any]:
    """Out-of-fold decisions of the fitted-and-thresholded classifier: per row whether it would be
    blocked by a model that never saw it (the threshold of each fold comes from that fold's training
    rows and the calibration queries). Returns the blocked flags of both classes."""
    from sklearn.model_selection import StratifiedKFold  # heavy (~1 s): only when the classifier is fitted

    texts = list(injections) + list(legitimate)
    labels = np.r_[np.ones(len(injections)), np.zeros(len(legitimate))]
    blocked = np.zeros(len(texts), dtype=bool)
    scores = np.zeros(len(texts))
    for train, held in StratifiedKFold(folds, shuffle=True, random_state=seed).split(texts, labels):
        model = InjectionClassifier.fit(embedder, [texts[i] for i in train if labels[i] == 1],
                                        [texts[i] for i in train if labels[i] == 0], calibration, c,
                                        char_ngrams=char_ngrams)
        fold_scores = model.scores([texts[i] for i in held])
        scores[held] = fold_scores
        blocked[held] = fold_scores >= model.threshold
    return {"injection_blocked": blocked[labels == 1], "legitimate_blocked": blocked[labels == 0],
            "scores": scores, "labels": labels}


def _rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def tuning_data(domain: str = "insurance", sets: Sequence[str] = CLASSIFIER_SETS) -> tuple[list[str], list[str], list[str]]:
    """(injections, legitimate turns, calibration queries): the injections of the tuning red-team sets L3
    is fitted on (`CLASSIFIER_SETS`) against their in_domain_hard rows and the dev split's in-domain
    queries (those that expect a tool); the calibration split's in-domain queries only set the
    threshold. The held-out sets are never read."""
    rows = [row for name in sets for row in _rows(ROOT / "data" / "redteam" / name)]
    injections = [r["text"] for r in rows if r.get("kind") == "injection"]
    legitimate = [r["text"] for r in rows if r.get("kind") == "in_domain_hard"]
    legitimate += [r["query"] for r in _rows(queries_path(domain, "dev")) if r.get("expected_tools")]
    calibration = [r["query"] for r in _rows(queries_path(domain, "calib")) if r.get("expected_tools")]
    return injections, legitimate, calibration


def fit_on_dev(embedder: Any, domain: str = "insurance", c: float = C) -> InjectionClassifier | None:
    """L3 fitted on `tuning_data`; None when the dev red-team split is missing or was not written for
    `domain` (it is the insurance domain's)."""
    if domain != "insurance":
        return None
    injections, legitimate, calibration = tuning_data(domain)
    if not injections or not legitimate:
        return None
    return InjectionClassifier.fit(embedder, injections, legitimate, calibration, c=c,
                                   fitted_on=f"data/redteam/{{{','.join(CLASSIFIER_SETS)}}} + {domain} dev queries (threshold: + calib)")
