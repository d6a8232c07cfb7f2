"""Follow-up turns: the weighted query, the history arms, the agent's carry, and rows without history unchanged."""

import numpy as np
import pytest
from conftest import HashEmbedder

from toolroute.agent.pack import DomainPack
from toolroute.agent.rewriter import carry_history, catalog_carry
from toolroute.cards import Catalog, ToolCard
from toolroute.evaluation.retrieval import evaluate
from toolroute.queries import EvalQuery
from toolroute.routing import RouterConfig, build_router
from toolroute.routing.dense import mix_vectors
from toolroute.routing.history import HistoryRouting, HistoryWeighting, resolve_history_arm

CARDS = {
    "premium": ToolCard(name="premium", purpose="월 보험료 계산", when_to_use=("보험료 얼마예요", "한 달에 얼마 내요")),
    "coverage": ToolCard(name="coverage", purpose="보장 내용 요약", when_to_use=("무엇을 보장해요", "보장 범위 알려줘")),
    "claim": ToolCard(name="claim", purpose="보험금 청구 절차", when_to_use=("청구는 어떻게 해요", "보험금 신청 방법")),
}
CATALOG = Catalog("history-unit", CARDS, authored=False)


def history(*turns):
    return tuple({"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(turns))


@pytest.fixture(params=["dense", "bm25", "hybrid"])
def router(request, chroma):
    return build_router(RouterConfig(arm=request.param, embedder=HashEmbedder()), CATALOG, chroma, progress=False,
                        no_call="none")


def test_weights_put_the_turn_first_and_sum_to_one():
    h = history("첫 질문", "첫 답", "둘째 질문", "둘째 답", "셋째 질문", "셋째 답")
    texts = HistoryWeighting(turn_weight=0.6, user_turns=2, decay=0.5, assistant_weight=0).texts("지금", h)
    assert [t for t, _ in texts] == ["지금", "셋째 질문", "둘째 질문"]  # most recent earlier turn first
    weights = [w for _, w in texts]
    assert sum(weights) == pytest.approx(1.0) and weights[0] == pytest.approx(0.6)
    assert weights[1] == pytest.approx(2 * weights[2])  # decay 0.5
    with_reply = HistoryWeighting(turn_weight=0.6, user_turns=1, assistant_weight=0.15).texts("지금", h)
    assert with_reply == [("지금", pytest.approx(0.6)), ("셋째 답", pytest.approx(0.15)), ("셋째 질문", pytest.approx(0.25))]
    assert HistoryWeighting().texts("지금", ()) == [("지금", 1.0)]  # nothing earlier: the turn alone


@pytest.mark.parametrize("settings", [dict(turn_weight=0), dict(turn_weight=1.2), dict(decay=0), dict(user_turns=-1),
                                      dict(turn_weight=0.9, assistant_weight=0.2), dict(no_call_from="both")])
def test_bad_weightings_are_refused(settings):
    with pytest.raises(ValueError):
        HistoryWeighting(**settings)


def test_mixed_vector_is_unit_and_leans_on_the_heavier_text():
    a, b = np.eye(4, dtype=np.float32)[:2]
    mixed = mix_vectors(np.stack([a, b]), np.array([0.7, 0.3]))
    assert np.linalg.norm(mixed) == pytest.approx(1.0) and mixed[0] > mixed[1] > 0


def test_one_text_of_weight_one_ranks_as_the_plain_query(router):
    query = "한 달 보험료 얼마 내요"
    plain = router.route_many([query])[0]
    weighted = router.route_weighted([[(query, 1.0)]])[0]
    assert weighted.top(3) == plain.top(3)
    assert [s for _, s in weighted.ranked] == pytest.approx([s for _, s in plain.ranked], abs=1e-5)


def test_weighted_arm_follows_the_history_and_none_ignores_it(router):
    h = history("이 보험 청구는 어떻게 해요? 보험금 신청 방법", "진단서를 내시면 됩니다.")
    turn = "그거요"
    none = HistoryRouting("none").route(router, turn, h)
    weighted = HistoryRouting("weighted", weighting=HistoryWeighting(turn_weight=0.5)).route(router, turn, h)
    assert none.ranked == router.route(turn).ranked and none.history["routed"] == [[turn, 1.0]]
    assert weighted.top(1) == ["claim"]
    assert weighted.query == turn and weighted.history["arm"] == "weighted" and weighted.history["turns"] == 2


def test_carry_arm_routes_the_text_the_carry_function_gives(router):
    calls = []

    def carry(turn, h):
        calls.append((turn, tuple(m["content"] for m in h)))
        return f"{turn} (보장 범위)"

    result = HistoryRouting("carry", carry).route(router, "알려줘", history("실속치매보험", "네"))
    assert calls == [("알려줘", ("실속치매보험", "네"))]
    assert result.history["routed"] == [["알려줘 (보장 범위)", 1.0]] and result.top(1) == ["coverage"]


def test_rows_without_history_are_routed_exactly_as_before(router):
    rows = [EvalQuery("a", "보험료 얼마예요?", ("premium",)), EvalQuery("b", "청구 방법", ("claim",)),
            EvalQuery("c", "안녕하세요", ())]
    before = evaluate(router, rows, ks=(1, 3), ci=False)
    for arm in ("none", "weighted", "carry", "carry+weighted"):
        after = evaluate(router, rows, ks=(1, 3), ci=False, history=HistoryRouting(arm, lambda t, h: t + " 청구"))
        assert after == before  # no history key, no changed ranking
    assert "history_arm" not in before and all("history" not in r for r in before["per_query"])


def test_a_file_with_history_rows_names_the_arm_per_row(router):
    rows = [EvalQuery("a", "보험료 얼마예요?", ("premium",)),
            EvalQuery("b", "그건요?", ("claim",), history=history("보험금 청구 절차 알려줘", "네."))]
    report = evaluate(router, rows, ks=(1,), ci=False, history=HistoryRouting("weighted"))
    assert report["n_history"] == 1 and report["history_arm"] == "weighted"
    assert "history" not in report["per_query"][0] and report["per_query"][1]["history"]["arm"] == "weighted"
    ignored = evaluate(router, rows, ks=(1,), ci=False)
    assert ignored["history_arm"] == "none" and "history" not in ignored["per_query"][1]


def test_no_call_from_the_turn_keeps_small_talk_uncalled(chroma):
    router = build_router(RouterConfig(arm="dense", embedder=HashEmbedder()), CATALOG, chroma, progress=False, no_call="none")
    router.fit_no_call(["보험료 얼마예요", "보장 내용 알려줘", "청구 방법 알려줘", "날씨 좋네요", "ㅋㅋㅋㅋ", "고마워요 수고"],
                       [True, True, True, False, False, False])
    h = history("보험료 얼마예요 한 달에", "3만 원입니다.")
    turn_rule = HistoryRouting("weighted", weighting=HistoryWeighting(no_call_from="turn")).route(router, "ㅋㅋㅋㅋ", h)
    alone = router.route("ㅋㅋㅋㅋ")
    assert (turn_rule.no_call, turn_rule.call_probability) == (alone.no_call, alone.call_probability)


def test_carry_arms_need_a_pack_and_auto_drops_carry_without_one():
    with pytest.raises(ValueError, match="needs a domain pack"):
        HistoryRouting("carry")
    with pytest.raises(ValueError, match="history arm must be one of"):
        HistoryRouting("everything")
    assert resolve_history_arm("auto", has_carry=False) in ("none", "weighted")
    assert "carry" not in resolve_history_arm("auto", has_carry=False)
    assert resolve_history_arm("carry", has_carry=True) == "carry"
    assert catalog_carry("tools.json") is None


def _context(text, context):
    out = dict(context)
    if "치매" in text:
        out["products"] = ["실속치매보험"]
    if "55세" in text:
        out["age"] = 55
    return out


PACK = DomainPack(name="unit", tools=[], system_prompt="", extract_context=_context,
                  render_context=lambda c: ", ".join(f"{k}={v}" for k, v in c.items()))


def test_carry_reads_every_earlier_user_turn_as_the_agent_does():
    h = history("55세예요", "네.", "치매보험 보장 알려줘", "경도치매부터 보장합니다.")
    assert carry_history("그럼 보험료는요?", h, PACK) == "그럼 보험료는요? (age=55, products=['실속치매보험'])"
    # the assistant's words are not read, small talk is never rewritten, and a restated field is not carried
    assert carry_history("그거요", history("안녕", "치매보험 드릴까요?"), PACK) == "그거요"
    assert carry_history("감사합니다", h, PACK) == "감사합니다"
    assert carry_history("60세 55세는요", h, PACK) == "60세 55세는요 (products=['실속치매보험'])"
