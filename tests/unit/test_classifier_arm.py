"""The classification arm (issue 40, item 2c): trained on card lines and synthetic queries, retrained
when a card changes, its vectors cached, its no-call rule refitted when its training data changes."""

import json

import numpy as np
import pytest

from toolroute.cards import Catalog, ToolCard
from toolroute.routing import RouterConfig, build_router
from toolroute.routing.learned import ClassifierRetriever, training_rows


class CountingEmbedder:
    """A bag-of-characters embedder that counts the query texts it embeds."""

    spec = "test:count"
    dim = 96

    def __init__(self):
        self.embedded: list[str] = []

    def embed_queries(self, texts):
        self.embedded += list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for ch in text:
                out[row, ord(ch) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    embed_passages = embed_queries


def _catalog(*names: str) -> Catalog:
    cards = {
        "premium": ToolCard(name="premium", purpose="월 보험료 계산", when_to_use=("보험료 얼마", "월 납입액 계산"), tags=("보험료",)),
        "claim": ToolCard(name="claim", purpose="보험금 청구 절차 안내", when_to_use=("청구 어떻게 해", "서류 뭐 내"), tags=("청구",)),
        "search": ToolCard(name="search", purpose="상품 찾기", when_to_use=("치아보험 있어", "상품 목록"), tags=("상품",)),
    }
    return Catalog(name="t", cards={n: cards[n] for n in names or cards}, sources={})


@pytest.fixture
def synthetic(tmp_path):
    path = tmp_path / "queries.jsonl"
    rows = [("납입 보험료 알려줘", "premium"), ("한 달에 얼마 내", "premium"), ("청구 서류", "claim"),
            ("보험금 받으려면", "claim"), ("무슨 상품 있어", "search"), ("치매 상품 있나", "search"),
            ("없어진 도구 질문", "gone")]
    path.write_text("".join(json.dumps({"query": q, "tool": t}, ensure_ascii=False) + "\n" for q, t in rows),
                    encoding="utf-8")
    return path


def test_training_rows_are_card_lines_then_synthetic_queries_of_tools_the_catalogue_has(synthetic):
    rows = training_rows(_catalog(), synthetic)
    assert rows[:3] == [("월 보험료 계산", "premium"), ("보험료 얼마", "premium"), ("월 납입액 계산", "premium")]
    assert ("한 달에 얼마 내", "premium") in rows and all(tool != "gone" for _, tool in rows)
    assert len(rows) == 9 + 6


def test_a_broken_synthetic_line_is_named(tmp_path):
    path = tmp_path / "queries.jsonl"
    path.write_text('{"query": "a", "tool": "premium"}\n{"text": "b"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"queries.jsonl:2: a synthetic query needs 'query' and 'tool'"):
        training_rows(_catalog(), path)


def test_the_classifier_ranks_every_tool_and_learns_the_synthetic_queries(synthetic, tmp_path):
    arm = ClassifierRetriever(_catalog(), CountingEmbedder(), synthetic, tmp_path / "cache")
    ranking = arm.rank_many(["한 달에 얼마 내", "보험금 받으려면"])
    assert [r.ranked[0][0] for r in ranking] == ["premium", "claim"]
    for r in ranking:
        assert sorted(n for n, _ in r.ranked) == ["claim", "premium", "search"]
        assert abs(sum(s for _, s in r.ranked) - 1.0) < 1e-6
        assert set(r.features) == set(ClassifierRetriever.features)
    weighted = arm.rank_weighted([[("보험금 받으려면", 1.0), ("한 달에 얼마 내", 0.2)]])
    assert weighted[0].ranked[0][0] == "claim"


def test_a_card_change_retrains_without_embedding_the_training_texts_again(synthetic, tmp_path):
    embedder = CountingEmbedder()
    arm = ClassifierRetriever(_catalog(), embedder, synthetic, tmp_path / "cache")
    arm.build()
    first = len(embedder.embedded)
    commit = arm.prepare_catalog(_catalog("premium", "claim"))
    assert arm.rank_many(["상품 목록"])[0].ranked[0][0] == "search"  # nothing changes before the commit
    commit()
    assert sorted(n for n, _ in arm.rank_many(["상품 목록"])[0].ranked) == ["claim", "premium"]  # search is gone
    assert embedder.embedded[first:] == ["상품 목록"] * (len(embedder.embedded) - first)  # only the queries
    fresh = CountingEmbedder()
    ClassifierRetriever(_catalog(), fresh, synthetic, tmp_path / "cache").build()
    assert fresh.embedded == []  # read from disk


def test_the_fingerprint_follows_the_training_data(synthetic, tmp_path):
    arm = ClassifierRetriever(_catalog(), CountingEmbedder(), synthetic, None)
    before = arm.fingerprint()
    synthetic.write_text(synthetic.read_text(encoding="utf-8") + json.dumps({"query": "새 질문", "tool": "claim"},
                                                                            ensure_ascii=False) + "\n", encoding="utf-8")
    assert arm.fingerprint() != before


def test_the_arm_is_routable_by_name_with_a_fitted_no_call_rule(tmp_path, chroma):
    """`RouterConfig(arm="classifier")` over the real insurance cards, with a hash embedder."""
    from conftest import HashEmbedder

    router = build_router(RouterConfig(arm="classifier", embedder=HashEmbedder()), client=chroma, progress=False,
                          no_call="fit")
    result = router.route("치아보험 있어요?")
    assert len(result.ranked) == len(router.catalog.names)
    assert router.no_call_rule is not None and router.no_call_rule.features == list(ClassifierRetriever.features)
