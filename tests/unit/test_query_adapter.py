"""The query adapter (issue 40, item 2b): the identity before training, trained deterministically toward the
tools of its pairs, saved and loaded, and usable as an embedder by name."""

import numpy as np
import pytest

from toolroute.embeddings import get_embedder
from toolroute.query_adapter import AdaptedEmbedder, QueryAdapter, train_adapter


def _problem(seed=0):
    """Three tools with two records each; queries sit between a tool's records and a wrong tool's."""
    rng = np.random.default_rng(seed)
    records = rng.normal(size=(6, 16)).astype(np.float32)
    records /= np.linalg.norm(records, axis=1, keepdims=True)
    owners = [0, 0, 1, 1, 2, 2]
    queries, labels = [], []
    for tool, wrong in ((0, 1), (1, 2), (2, 0)):
        for _ in range(20):
            q = 0.45 * records[2 * tool] + 0.55 * records[2 * wrong] + 0.1 * rng.normal(size=16)
            queries.append(q / np.linalg.norm(q))
            labels.append(tool)
    return np.array(queries, dtype=np.float32), labels, records, owners


def _accuracy(vectors, labels, records, owners):
    sims = vectors @ records.T
    best = np.stack([sims[:, [i for i, o in enumerate(owners) if o == t]].max(axis=1) for t in range(3)], axis=1)
    return float((best.argmax(axis=1) == np.array(labels)).mean())


def test_an_untrained_adapter_is_the_identity():
    q, _, _, _ = _problem()
    adapter = QueryAdapter(np.ones((16, 4), np.float32), np.zeros((4, 16), np.float32), "b", "d")
    assert np.allclose(adapter.apply(q), q, atol=1e-6)


def test_training_moves_queries_to_their_tools_and_repeats_exactly(tmp_path):
    q, labels, records, owners = _problem()
    before = _accuracy(q, labels, records, owners)
    adapter = train_adapter(q, labels, records, owners, 3, base="test:base", rank=4, steps=150, lr=0.05)
    after = _accuracy(adapter.apply(q), labels, records, owners)
    assert before < 0.5 and after > 0.9
    again = train_adapter(q, labels, records, owners, 3, base="test:base", rank=4, steps=150, lr=0.05)
    assert np.array_equal(adapter.u, again.u) and adapter.digest == again.digest
    loaded = QueryAdapter.load(adapter.save(tmp_path / "a.npz"))
    assert np.allclose(loaded.apply(q), adapter.apply(q)) and loaded.base == "test:base"


def test_a_broken_file_and_a_wrong_base_are_named(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="bad.npz: not a query adapter"):
        QueryAdapter.load(bad)

    class Base:
        spec, dim = "other", 16

    with pytest.raises(ValueError, match="trained on 'test:base', not on 'other'"):
        AdaptedEmbedder(Base(), QueryAdapter(np.zeros((16, 2)), np.zeros((2, 16)), "test:base", "d"))


def test_an_adapter_is_an_embedder_by_name(tmp_path):
    base = get_embedder("e5-small")
    adapter = QueryAdapter(np.zeros((base.dim, 2), np.float32), np.zeros((2, base.dim), np.float32), base.spec, "abc")
    path = adapter.save(tmp_path / "adapter.npz")
    adapted = get_embedder(f"e5-small+adapter:{path}")
    assert adapted.spec == f"{base.spec}+adapter:abc"
    text = ["치아보험 있어요?"]
    assert np.allclose(adapted.embed_queries(text), base.embed_queries(text), atol=1e-5)  # a zero map
    assert np.allclose(adapted.embed_passages(text), base.embed_passages(text))
