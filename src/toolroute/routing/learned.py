"""Routing by classification: a linear classifier over (the query's e5 vector, BM25 scores), trained on
the cards' own lines and a domain's synthetic queries (issue 40, item 2c).

For a fixed catalogue a router is a 54-way classifier, and one trained on thousands of varied queries
(`toolroute.cards.synthetic`) learns what a card's few examples cannot show. A multinomial logistic
regression on the query vector plus the BM25 score of each card's purpose and tags (the lexical cue,
without the examples: a training line must not score against itself) is retrained in seconds when a
card changes, because every training text's vector is kept on disk (`VectorCache`).

Training rows: each card's `purpose` and `when_to_use` lines, plus the rows of `synthetic_path(domain)`
whose tool is in the catalogue (a removed tool's queries are left out; a new tool has its card lines).
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from toolroute.cards import Catalog
from toolroute.embeddings import Embedder
from toolroute.routing.base import Ranking, Retriever, WeightedQuery
from toolroute.routing.dense import mix_vectors
from toolroute.routing.lexical import BM25ToolIndex

LEXICAL_FIELDS = ("purpose", "tags")
C = 10.0  # inverse regularisation; chosen on dev + tune (`toolroute_lab.studies.learned_routing`)


def training_rows(catalog: Catalog, synthetic: str | Path | None = None) -> list[tuple[str, str]]:
    """(text, tool): every card's purpose and examples, then the synthetic queries of its tools."""
    rows = [(text, card.name) for card in catalog for text in (card.purpose, *card.when_to_use)]
    path = Path(synthetic) if synthetic else None
    if path is not None and path.is_file():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                text, tool = row["query"], row["tool"]
            except (json.JSONDecodeError, KeyError, TypeError) as error:
                raise ValueError(f"{path}:{number}: a synthetic query needs 'query' and 'tool' ({error})") from None
            if tool in catalog.cards:
                rows.append((text, tool))
    return rows


class VectorCache:
    """Query vectors of training texts, by embedder and text, kept in one `.npz` file per embedder."""

    def __init__(self, embedder: Embedder, folder: str | Path | None):
        self.embedder = embedder
        digest = hashlib.sha256(embedder.spec.encode()).hexdigest()[:12]
        self.path = Path(folder) / f"vectors-{digest}.npz" if folder else None
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        if self.path is not None and self.path.is_file():
            try:
                with np.load(self.path, allow_pickle=False) as data:
                    self._vectors = dict(zip(data["texts"].tolist(), data["vectors"]))
            except (OSError, ValueError, KeyError):  # unreadable: rebuilt as texts are embedded again
                self._vectors = {}

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
            if missing:
                for text, vector in zip(missing, self.embedder.embed_queries(missing)):
                    self._vectors[text] = np.asarray(vector, dtype=np.float32)
                self._save()
            return np.stack([self._vectors[t] for t in texts])

    def _save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp.npz")
        texts = list(self._vectors)
        np.savez(tmp, texts=np.array(texts), vectors=np.stack([self._vectors[t] for t in texts]))
        tmp.replace(self.path)


_BLAS = None


def _one_blas_thread():
    """These products are small; on 2 cores a second BLAS thread only spins against the e5 encoder's
    threads (measured: a route took several times as long), so they run on one."""
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController  # sklearn's own dependency

        _BLAS = ThreadpoolController()
    return _BLAS.limit(limits=1, user_api="blas")


class _Model:
    """One fitted classifier over one catalogue: its BM25 index and the logistic weights."""

    def __init__(self, catalog: Catalog, rows: list[tuple[str, str]], cache: VectorCache, c: float):
        from sklearn.linear_model import LogisticRegression  # heavy (~1 s): only when a classifier is fitted

        self.catalog = catalog
        self.lexical = BM25ToolIndex(catalog, fields=LEXICAL_FIELDS)
        texts = [t for t, _ in rows]
        self.training_vectors = cache.vectors(texts)
        X = self.features(self.training_vectors, [self.lexical.scores(t)[0] for t in texts])
        self.classifier = LogisticRegression(C=c, max_iter=3000).fit(X, [tool for _, tool in rows])
        self.classes = [str(name) for name in self.classifier.classes_]

    @staticmethod
    def features(vectors: np.ndarray, lexical: Sequence[np.ndarray]) -> np.ndarray:
        scores = np.stack(lexical).astype(np.float32)
        return np.hstack([vectors, scores / (1.0 + scores.max(axis=1, keepdims=True))])

    def rank(self, vectors: np.ndarray, lexical: list[tuple[np.ndarray, list[str]]]) -> list[Ranking]:
        with _one_blas_thread():
            probabilities = self.classifier.predict_proba(self.features(vectors, [s for s, _ in lexical]))
            nearest = (np.asarray(vectors, dtype=np.float32) @ self.training_vectors.T).max(axis=1)
        out = []
        for row, (_, tokens), near in zip(probabilities, lexical, nearest):
            order = sorted(range(len(row)), key=lambda i: (-round(float(row[i]), 9), self.classes[i]))
            ranked = [(self.classes[i], float(row[i])) for i in order]
            ranked += [(name, 0.0) for name in self.catalog.names if name not in self.classes]
            top1 = ranked[0][1]
            out.append(Ranking(ranked, {"clf_top1": top1, "clf_margin": top1 - ranked[1][1] if len(ranked) > 1 else top1,
                                        "nearest_line": float(near), "lexical_coverage": self.lexical.coverage(tokens)}))
        return out


class ClassifierRetriever(Retriever):
    """The classification arm (see the module doc)."""

    arm = "classifier"
    # the no-call rule's evidence: how sure the classifier is, and how close the query comes to any
    # training line at all (an off-domain request is far from every one of them)
    features = ("clf_top1", "clf_margin", "nearest_line", "lexical_coverage")

    def __init__(self, catalog: Catalog, embedder: Embedder, synthetic: str | Path | None = None,
                 cache_folder: str | Path | None = None, c: float = C):
        self.embedder, self.synthetic, self.c = embedder, synthetic, c
        self.cache = VectorCache(embedder, cache_folder)
        self._catalog = catalog
        self._model: _Model | None = None

    @property
    def catalog(self) -> Catalog:
        return self._catalog

    def fingerprint(self) -> str:
        path = Path(self.synthetic) if self.synthetic else None
        data = hashlib.sha256(path.read_bytes()).hexdigest()[:12] if path is not None and path.is_file() else "-"
        return f"classifier|C={self.c}|{LEXICAL_FIELDS}|synthetic={data}"

    def build(self, progress: bool = True):
        if self._model is None:
            self._model = _Model(self._catalog, training_rows(self._catalog, self.synthetic), self.cache, self.c)

    def prepare_catalog(self, catalog: Catalog) -> Callable[[], None]:
        model = _Model(catalog, training_rows(catalog, self.synthetic), self.cache, self.c)

        def commit() -> None:
            self._catalog, self._model = catalog, model

        return commit

    def over(self, catalog: Catalog) -> "ClassifierRetriever":
        other = ClassifierRetriever(catalog, self.embedder, self.synthetic, None, self.c)
        other.cache = self.cache
        return other

    def rank_many(self, queries: Sequence[str]) -> list[Ranking]:
        if not queries:
            return []
        self.build(progress=False)
        return self._model.rank(self.embedder.embed_queries(list(queries)),
                                [self._model.lexical.scores(q) for q in queries])

    def rank_weighted(self, queries: Sequence[WeightedQuery]) -> list[Ranking]:
        """The weighted mean of the texts' vectors and the weighted sum of their BM25 scores."""
        if not queries:
            return []
        self.build(progress=False)
        texts = [text for query in queries for text, _ in query]
        vectors = self.embedder.embed_queries(texts)
        mixed, lexical, start = [], [], 0
        for query in queries:
            weights = np.array([w for _, w in query], dtype=np.float64)
            mixed.append(mix_vectors(vectors[start:start + len(query)], weights))
            parts = [self._model.lexical.scores(text) for text, _ in query]
            lexical.append((sum(w * s for (s, _), w in zip(parts, weights)), [t for _, tokens in parts for t in tokens]))
            start += len(query)
        return self._model.rank(np.stack(mixed), lexical)
