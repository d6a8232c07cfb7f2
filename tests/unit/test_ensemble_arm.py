"""The hybrid+classifier arm (issue 40): RRF of the two rankings, the cascade's decisions kept as they
are, routable by name with its cascade and no-call rule fitted like the default's."""

from toolroute.routing import RouterConfig, build_router
from toolroute.routing.base import Ranking
from toolroute.routing.ensemble import EnsembleRetriever
from toolroute.routing.learned import ClassifierRetriever


class Fixed:
    """A stand-in retriever: a fixed ranking per query, recording what it was asked."""

    def __init__(self, rankings, cascade_on=()):
        self.rankings, self.cascade_on, self.asked, self.cascade = rankings, set(cascade_on), [], None
        self.committed = False

    def rank_many(self, queries):
        self.asked += list(queries)
        return [Ranking([(n, 1.0 / (i + 1)) for i, n in enumerate(self.rankings[q])],
                        {"cascade": 1.0} if q in self.cascade_on else {"score": 0.5}) for q in queries]

    def rank_weighted(self, queries):
        return self.rank_many([q[0][0] for q in queries])

    def prepare_catalog(self, catalog):
        def commit():
            self.committed = True
            return "report"
        return commit


def test_rankings_are_fused_and_a_cascade_decision_is_kept_without_asking_the_classifier():
    hybrid = Fixed({"q1": ["a", "b", "c"], "q2": ["a", "b", "c"]}, cascade_on={"q2"})
    learned = Fixed({"q1": ["b", "c", "a"], "q2": ["c", "b", "a"]})
    ensemble = EnsembleRetriever(hybrid, learned, rrf_k=10, classifier_weight=2.0)
    first, second = ensemble.rank_many(["q1", "q2"])
    assert [n for n, _ in first.ranked] == ["b", "a", "c"]  # b 1/12+2/11, a 1/11+2/13, c 1/13+2/12
    assert first.features == {"score": 0.5}
    assert [n for n, _ in second.ranked] == ["a", "b", "c"] and second.features == {"cascade": 1.0}
    assert learned.asked == ["q1"]
    equal = EnsembleRetriever(hybrid, learned, rrf_k=10, classifier_weight=1.0).rank_many(["q1"])[0]
    assert [n for n, _ in equal.ranked][0] == "b"  # b is 2nd and 1st, a is 1st and 3rd


def test_weighted_queries_always_take_both_and_a_catalogue_change_reaches_both():
    hybrid = Fixed({"q": ["a", "b"]}, cascade_on={"q"})
    learned = Fixed({"q": ["b", "a"]})
    ensemble = EnsembleRetriever(hybrid, learned, rrf_k=10, classifier_weight=3.0)
    assert ensemble.rank_weighted([[("q", 1.0)]])[0].ranked[0][0] == "b"
    assert ensemble.prepare_catalog(None)() == "report" and hybrid.committed and learned.committed
    ensemble.cascade = "rule"
    assert hybrid.cascade == "rule" and ensemble.cascade == "rule"


def test_the_arm_is_routable_by_name_with_its_cascade_and_no_call_rule(chroma):
    from conftest import HashEmbedder

    config = RouterConfig(arm="hybrid+classifier", embedder=HashEmbedder())
    assert config.cascaded and config.label.startswith("hybrid+classifier:")
    router = build_router(config, client=chroma, progress=False, no_call="fit")
    assert isinstance(router.retriever, EnsembleRetriever)
    result = router.route("치아보험 있어요?")
    assert len(result.ranked) == len(router.catalog.names)
    assert router.no_call_rule is not None
    assert set(router.no_call_rule.features) <= set(EnsembleRetriever.features)
    assert set(ClassifierRetriever.features) <= set(EnsembleRetriever.features)
