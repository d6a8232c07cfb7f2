import numpy as np
import pytest
from ranx import Run, fuse

from toolroute.routing.lexical import BM25ToolIndex, tokenize_korean
from toolroute.routing.nocall import NoCallRule
from toolroute.routing.fusion import rrf


def test_tokenizer_drops_particles_and_keeps_codes():
    assert tokenize_korean("보험료는 얼마") == tokenize_korean("보험료를 얼마")
    assert "보험료" in tokenize_korean("보험료는 얼마예요?")
    assert "b010" in tokenize_korean("B010 자기부담금")


def test_bm25_finds_the_card_with_the_words(insurance_catalog):
    bm25 = BM25ToolIndex(insurance_catalog)
    scores, tokens = bm25.scores("해지된 계약 부활 조건")
    top = [bm25.names[i] for i in np.argsort(-scores)[:3]]
    assert "underwriting_reinstatement_rule" in top
    assert bm25.coverage(tokenize_korean("다이어트 식단")) < bm25.coverage(tokenize_korean("암보험 보험료"))
    zero, _ = bm25.scores("zzqx")
    assert not zero.any()


def test_rrf_matches_ranx_fusion():
    a = ["t1", "t2", "t3", "t4"]
    b = ["t3", "t1", "t5"]
    ours = dict(rrf([a, b], k=60))
    runs = [Run({"q": {n: float(len(r) - i) for i, n in enumerate(r)}}) for r in (a, b)]
    theirs = fuse(runs=runs, method="rrf", params={"k": 60}).to_dict()["q"]
    assert set(ours) == set(theirs)
    for name in ours:
        assert ours[name] == pytest.approx(theirs[name])


def test_no_call_rule_fits_and_round_trips():
    rng = np.random.default_rng(0)
    calls = [{"x": rng.normal(1.0, 0.3), "y": rng.normal(0.5, 0.2)} for _ in range(80)]
    nocalls = [{"x": rng.normal(0.0, 0.3), "y": rng.normal(0.5, 0.2)} for _ in range(20)]
    rule = NoCallRule.fit(calls + nocalls, [True] * 80 + [False] * 20, ["x", "y"], fitted_on="synthetic")
    # Out-of-fold figures at the chosen cut: the false no-call bound holds and most no-calls are caught.
    assert rule.dev_false_no_call_rate <= 0.03 and rule.dev_no_call_accuracy > 0.6
    looser = NoCallRule.fit(calls + nocalls, [True] * 80 + [False] * 20, ["x", "y"], max_false_no_call=0.2)
    assert looser.threshold > rule.threshold and looser.dev_no_call_accuracy >= rule.dev_no_call_accuracy
    assert rule.predict_no_call({"x": -0.5, "y": 0.5}) and not rule.predict_no_call({"x": 1.5, "y": 0.5})
    assert NoCallRule.from_dict(rule.to_dict()) == rule
    with pytest.raises(ValueError, match="both call and no-call"):
        NoCallRule.fit(calls, [True] * 80, ["x", "y"])
