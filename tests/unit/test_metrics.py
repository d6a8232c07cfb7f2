
import numpy as np
import pytest
from ranx import Qrels, Run, evaluate

from toolroute.evaluation.metrics import RoutedRow, bootstrap_ci, metric_columns, paired_comparison, row_scores, summarize

ROWS = [
    RoutedRow("q1", ("a",), ("a", "b", "c"), False),          # hit
    RoutedRow("q2", ("b",), ("a", "b", "c"), False),          # rank 2
    RoutedRow("q3", ("c",), ("a", "b", "d", "e", "f", "c"), True),  # rank 6, refused
    RoutedRow("q4", ("a", "d"), ("a", "b", "d"), False),      # multi: both in top 3
    RoutedRow("q5", (), ("a", "b"), True),                     # no-call, right
    RoutedRow("q6", (), ("a", "b"), False),                    # no-call, wrong
]


def test_hand_computed_values():
    m = summarize(ROWS, ks=(1, 3, 5))
    assert m["recall@1"] == pytest.approx(1 / 4)
    assert m["recall@3"] == pytest.approx(3 / 4)   # q4 needs both a and d: rank 1 and 3
    assert m["recall@5"] == pytest.approx(3 / 4)
    assert m["hit@1"] == pytest.approx(2 / 4)      # q1 and q4 (top tool is one of the expected)
    assert m["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 6 + 1) / 4)
    assert m["no_call_accuracy"] == pytest.approx(1 / 2)
    assert m["false_no_call_rate"] == pytest.approx(1 / 4)


def test_multi_tool_row_needs_all_expected():
    row = RoutedRow("m", ("a", "z"), ("a", "b", "c"), False)
    s = row_scores(row, ks=(3,))
    assert s["recall@3"] == 0.0 and s["hit@1"] == 1.0 and s["mrr"] == 1.0


def test_ranking_metrics_agree_with_ranx_on_single_tool_rows():
    rng = np.random.default_rng(7)
    tools = [f"t{i}" for i in range(20)]
    rows = []
    for i in range(60):
        ranked = tuple(rng.permutation(tools))
        rows.append(RoutedRow(f"q{i}", (tools[rng.integers(20)],), ranked, False))
    ours = summarize(rows, ks=(1, 3, 5, 10))
    qrels = Qrels({r.id: {r.expected[0]: 1} for r in rows})
    run = Run({r.id: {name: float(len(r.ranked) - j) for j, name in enumerate(r.ranked)} for r in rows})
    theirs = evaluate(qrels, run, ["hit_rate@1", "hit_rate@3", "hit_rate@5", "hit_rate@10", "mrr", "recall@5"])
    for k in (1, 3, 5, 10):
        assert ours[f"recall@{k}"] == pytest.approx(theirs[f"hit_rate@{k}"])
    assert ours["recall@5"] == pytest.approx(theirs["recall@5"])  # one relevant tool: the definitions coincide
    assert ours["hit@1"] == pytest.approx(theirs["hit_rate@1"])
    assert ours["mrr"] == pytest.approx(theirs["mrr"])


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    ci1 = bootstrap_ci(ROWS * 10, ks=(1, 3), n_boot=300, seed=1)
    ci2 = bootstrap_ci(ROWS * 10, ks=(1, 3), n_boot=300, seed=1)
    assert ci1 == ci2
    point = summarize(ROWS * 10, ks=(1, 3))
    for key in ("recall@1", "mrr", "hit@1", "no_call_accuracy"):
        lo, hi = ci1[key]
        assert lo <= point[key] <= hi and lo < hi


def test_paired_comparison():
    better = [RoutedRow(r.id, r.expected, tuple(r.expected) + r.ranked, r.no_call_predicted) for r in ROWS]
    same = paired_comparison(ROWS, ROWS, "hit@1")
    assert same["diff"] == 0 and same["p_value"] == 1.0
    up = paired_comparison(ROWS, better, "mrr", n_boot=500)
    assert up["diff"] > 0 and up["wins_b"] > 0 and up["wins_a"] == 0
    with pytest.raises(ValueError, match="same queries"):
        paired_comparison(ROWS, ROWS[::-1], "mrr")


def test_metric_columns_give_point_ci_and_the_paired_difference_to_a_baseline():
    base = [RoutedRow(f"q{i}", ("a",), ("b", "a"), False) for i in range(10)]
    better = [RoutedRow(f"q{i}", ("a",), ("a", "b") if i < 6 else ("b", "a"), False) for i in range(10)]
    alone = metric_columns(better, ["hit@1", "mrr"], (1,))
    assert alone["hit@1"] == 0.6 and alone["hit@1_ci_low"] <= 0.6 <= alone["hit@1_ci_high"] and "hit@1_diff" not in alone
    paired = metric_columns(better, ["hit@1"], (1,), baseline=base)
    assert paired["hit@1_diff"] == 0.6 and paired["hit@1_diff_ci_low"] > 0 and paired["hit@1_diff_p"] < 0.05


def test_right_call_counts_the_no_call_decision_where_hit_at_1_does_not():
    """A call row the router refused is a Hit@1 (its ranking is right) but not a right call."""
    rows = [RoutedRow("called right", ("a",), ("a", "b"), False),
            RoutedRow("refused, ranking right", ("a",), ("a", "b"), True),
            RoutedRow("called wrong", ("a",), ("b", "a"), False),
            RoutedRow("no-call refused", (), ("a",), True),
            RoutedRow("no-call called", (), ("a",), False)]
    assert [row_scores(r)["right_call"] for r in rows] == [1.0, 0.0, 0.0, 1.0, 0.0]
    assert [row_scores(r)["hit@1"] for r in rows[:3]] == [1.0, 1.0, 0.0]
    summary = summarize(rows)
    assert summary["right_call"] == pytest.approx(2 / 5) and summary["hit@1"] == pytest.approx(2 / 3)
    low, high = bootstrap_ci(rows, n_boot=200)["right_call"]
    assert 0.0 <= low <= 2 / 5 <= high <= 1.0
