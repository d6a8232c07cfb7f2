"""The BM25-first cascade (`routing.cascade`): the fitted cut, the skipped dense pass, and the router's
call decision on a skipped query."""

from __future__ import annotations

import pytest

from conftest import HashEmbedder
from toolroute.cards import Catalog, ToolCard
from toolroute.routing import RouterConfig, build_router
from toolroute.routing.cascade import CascadeRule


def test_the_fit_skips_the_most_queries_without_a_no_call_row_or_a_worse_top1():
    # (first, second) BM25 scores; rows 0-3 decisive calls BM25 gets right, row 4 a no-call row with a
    # wide but weak match, row 5 a call with a narrower margin where BM25 is wrong and the hybrid right
    scores = [[10, 2], [9, 1], [8, 3], [6, 1], [4, 1], [7, 5], [5, 4.5]]
    bm25_right = [True, True, True, True, False, False, True]
    hybrid_right = [True, True, True, True, False, True, True]
    is_call = [True, True, True, True, False, True, True]
    rule = CascadeRule.fit(scores, bm25_right, hybrid_right, is_call, fitted_on="toy")
    assert rule is not None and rule.fitted_on == "toy"
    skipped = [rule.decisive(s) for s in scores]
    assert not skipped[4]  # the no-call row is never skipped
    assert sum(skipped) == 4 and skipped[:4] == [True] * 4 and not skipped[5]  # the best share that keeps top-1
    assert rule.share == pytest.approx(4 / 7, abs=1e-4) and rule.n == 7
    assert not rule.decisive([]) and not rule.decisive([0.0])


def test_no_cut_means_no_rule():
    assert CascadeRule.fit([[5, 1]], [False], [True], [True]) is None
    with pytest.raises(ValueError, match="differ in length"):
        CascadeRule.fit([[5, 1]], [True, True], [True], [True])


def _catalog() -> Catalog:
    cards = {
        "premium_estimate": ToolCard(name="premium_estimate", purpose="월 보험료 계산",
                                     when_to_use=("보험료 얼마예요", "월 보험료 계산해줘", "납입 보험료 알려줘")),
        "claim_guide": ToolCard(name="claim_guide", purpose="보험금 청구 절차 안내",
                                when_to_use=("청구 절차 알려줘", "보험금 어떻게 받아요", "청구 접수 방법")),
        "weather": ToolCard(name="weather", purpose="날씨 안내", when_to_use=("비 와?", "우산 필요해?", "기온은?")),
    }
    return Catalog("toy", cards, authored=False)


def test_a_decisive_query_skips_the_dense_pass_and_is_routed_as_a_call(chroma):
    router = build_router(RouterConfig(embedder=HashEmbedder(), dev=None), _catalog(), chroma, progress=False,
                          no_call="none")
    embedded = []
    dense = router.retriever.dense
    original = dense.rank_many
    dense.rank_many = lambda queries: (embedded.extend(queries), original(queries))[1]
    router.retriever.cascade = CascadeRule(max_ratio=0.5, min_top1=0.1)
    decisive, other = "보험금 청구 절차", "오늘 뭐 하지"
    first, second = router.route_many([decisive, other])
    assert embedded == [other]  # only the query without a decisive BM25 match was embedded
    assert first.top(1) == ["claim_guide"] and first.features.get("cascade") == 1.0 and first.no_call is False
    assert sorted(first.top(3)) == sorted(_catalog().names)  # the rest of the catalogue still follows
    assert "cascade" not in second.features


def test_fitting_reads_every_query_through_the_full_hybrid(chroma):
    router = build_router(RouterConfig(embedder=HashEmbedder(), dev=None), _catalog(), chroma, progress=False,
                          no_call="none")
    router.retriever.cascade = CascadeRule(max_ratio=0.9, min_top1=0.0)
    queries = ["보험금 청구 절차", "월 보험료 계산", "비 와?", "점심 메뉴 추천"]
    rule = router.fit_no_call(queries, [True, True, True, False])
    assert "dense_top1" in rule.features or any("dense" in f for f in rule.features)
    assert router.retriever.cascade is not None  # put back after fitting
    fitted = router.fit_cascade(queries, [["claim_guide"], ["premium_estimate"], ["weather"], []])
    assert router.retriever.cascade is fitted


def test_only_the_hybrid_arm_has_a_cascade():
    with pytest.raises(ValueError, match="only an arm with a BM25 pass before a dense one"):
        RouterConfig(arm="dense", cascade=True)
    assert RouterConfig(cascade=True).label.endswith("+cascade")
