"""02's statistics recomputed on a tiny fixture (issue 23 item 5, issue 25 build 3): the per-split table, the
per-writer table with its gap, the row kinds as separate lines, the no-call ROC and risk–coverage, per-tool
recall, and Holm's correction in the paired table."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from toolroute.evaluation.metrics import RoutedRow, summarize, unpaired_difference, wilson_interval
from toolroute_lab.e02_ablation import ablation
from toolroute_lab.e02_ablation import breakdowns

KS = (1, 3, 5)
TOOLS = ["a1", "a2", "b1", "b2", "c1", "c2"]
MODULES = {"a1": "A", "a2": "A", "b1": "B", "b2": "B", "c1": "C", "c2": "C"}
ARMS = ("hybrid:default", "bm25")


def _split(name: str, n: int, seed: int, kinds=("single", "confusion", "multi", "no_call")):
    """Queries of the given kinds and, per arm, routed rows in the same order (seeded, so tests are exact)."""
    rng = np.random.default_rng(seed)
    queries, rows = [], {arm: [] for arm in ARMS}
    for i in range(n):
        kind = kinds[i % len(kinds)]
        expected = () if kind == "no_call" else tuple(rng.choice(TOOLS, 2 if kind == "multi" else 1, replace=False))
        queries.append(SimpleNamespace(id=f"{name}{i}", expected_tools=expected, kind=kind))
        for arm in ARMS:
            ranked = tuple(rng.permutation(TOOLS))
            if rng.uniform() < 0.6 and expected:  # often right
                ranked = tuple(expected) + tuple(t for t in ranked if t not in expected)
            rows[arm].append(RoutedRow(f"{name}{i}", expected, ranked, bool(rng.uniform() < (0.8 if not expected else 0.1))))
    return queries, rows


SPLITS = {s: _split(s, n, seed) for s, n, seed in (("dev", 24, 1), ("calib", 16, 3), ("test", 28, 4))}
SPLITS["tune"] = _split("tune", 21, 2, kinds=("single", "multi", "no_call"))  # writer B wrote no confusion pairs
QUERIES = {s: q for s, (q, _) in SPLITS.items()}
ROWS = {s: r for s, (_, r) in SPLITS.items()}


def _results(split: str) -> dict[str, ablation.ArmResult]:
    out = {}
    for arm, spec in zip(ARMS, (ablation.arm_config("hybrid"), ablation.arm_config("bm25"))):
        rows = ROWS[split][arm]
        out[arm] = ablation.ArmResult(spec, rows, summarize(rows, KS),
                                      breakdowns.bootstrap_ci(rows, KS, n_boot=200), 0.4, 0.0, 0.0, [])
    return out


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b)


def test_split_table_holds_every_arm_on_every_split_with_counts_writer_and_role():
    tables = {s: ablation.results_table(_results(s), KS) for s in SPLITS}
    table = breakdowns.split_table(tables, QUERIES)
    assert len(table) == len(ARMS) * len(SPLITS)
    assert list(table.columns[:7]) == ["arm_label", "split", "writer", "role", "n", "n_call", "n_no_call"]
    for _, row in table.iterrows():
        rows = ROWS[row["split"]][row["arm_label"]]
        expected = summarize(rows, KS)
        for key in ("hit@1", "recall@1", "recall@5", "mrr", "no_call_accuracy", "false_no_call_rate"):
            assert _same(row[key], expected[key]), (row["split"], key)
            assert row[f"{key}_lo"] <= row[key] <= row[f"{key}_hi"]
        assert row["n"] == len(rows) and row["n_call"] == sum(bool(r.expected) for r in rows)
        assert row["writer"] == ("B" if row["split"] == "tune" else "A")
    assert "in-sample" in table.loc[table["split"] == "calib", "role"].iloc[0]


def test_writer_table_pools_each_writers_splits_and_gives_the_gap_with_a_ci():
    table = breakdowns.writer_table(ROWS, ARMS, QUERIES, KS, n_boot=300)
    groups = list(zip(table["writer"], table["which"], table["splits"]))[:3]
    # dev, tune and calib all steered choices: only test is not tuned on, and writer B wrote a tuning split only
    assert groups == [("A", "all", "dev,calib,test"), ("A", "not tuned on", "test"), ("B", "all", "tune")]
    assert set(table.loc[table["splits"] == "tune", "tuned_on"]) == {True}
    for _, row in table.iterrows():
        pooled = [r for s in row["splits"].split(",") for r in ROWS[s][row["arm_label"]]]
        expected = summarize(pooled, KS)
        assert row["n"] == len(pooled)
        for key in ("hit@1", "recall@5", "mrr", "no_call_accuracy"):
            assert _same(row[key], expected[key]), key
    b = table[(table["writer"] == "B") & (table["arm_label"] == ARMS[0])].iloc[0]
    a = table[(table["which"] == "not tuned on") & (table["arm_label"] == ARMS[0])].iloc[0]
    assert b["gap_vs"] == "A: test" and b["kinds"] == "single,multi,no_call" == b["same_kinds"]
    assert a["kinds"] == "single,confusion,multi,no_call"
    for metric in breakdowns.GAP_METRICS:
        assert b[f"{metric}_gap"] == pytest.approx(b[metric] - a[metric])
        assert b[f"{metric}_gap_lo"] <= b[f"{metric}_gap"] <= b[f"{metric}_gap_hi"]
    # on the kinds both wrote: A's confusion-pair rows left out
    same = [r for s in ("test",) for r, q in zip(ROWS[s][ARMS[0]], QUERIES[s]) if q.kind != "confusion"]
    assert b["hit@1_gap_same_kinds"] == pytest.approx(b["hit@1"] - summarize(same, KS)["hit@1"])
    assert table.loc[table["writer"] == "A", "hit@1_gap"].isna().all()
    assert table.loc[table["writer"] == "A", "hit@1_gap_same_kinds"].isna().all()


def test_unpaired_difference_of_a_set_with_itself_is_zero_and_seeded():
    rows = ROWS["test"][ARMS[0]]
    same = unpaired_difference(rows, rows, "hit@1", KS, n_boot=300)
    assert same["diff"] == 0 and same["ci_low"] < 0 < same["ci_high"]
    assert unpaired_difference(rows, ROWS["dev"][ARMS[0]], "mrr", KS, n_boot=300) == \
        unpaired_difference(rows, ROWS["dev"][ARMS[0]], "mrr", KS, n_boot=300)


def test_kind_table_reports_each_kind_on_its_own_rows():
    table = breakdowns.kind_table(ROWS, QUERIES, ARMS, KS, n_boot=200)
    assert len(table) == len(ARMS) * (3 * len(breakdowns.KINDS) + 3)  # only the kinds a split has: tune has no pairs
    assert "confusion" not in set(table.loc[table["split"] == "tune", "kind"])
    for _, row in table.iterrows():
        kinds = [breakdowns.row_kind(q) for q in QUERIES[row["split"]]]
        part = [r for r, k in zip(ROWS[row["split"]][row["arm_label"]], kinds) if k == row["kind"]]
        expected = summarize(part, KS)
        assert row["n"] == len(part)
        for key in ("hit@1", "recall@1", "recall@3", "mrr", "no_call_accuracy", "false_no_call_rate"):
            assert _same(row[key], expected[key]), (row["kind"], key)
    multi = table[table["kind"] == "multi"]
    assert (multi["recall@1"] == 0).all() and (multi["hit@1"] > 0).any()
    assert multi["note"].str.contains("Recall@1 is 0 by definition").all()
    no_call = table[table["kind"] == "no_call"]
    assert no_call["hit@1"].isna().all() and no_call["false_no_call_rate"].isna().all()
    assert no_call["no_call_accuracy"].notna().all()
    assert table.loc[table["split"] == "calib", "note"].str.contains("fitted on these rows").all()
    with pytest.raises(ValueError, match="not in the order"):
        breakdowns.kind_table({"test": {ARMS[0]: ROWS["test"][ARMS[0]][::-1]}}, QUERIES, ARMS[:1], KS)


def _decisions(seed: int = 0, threshold: float = 0.5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    queries = QUERIES["test"]
    base = ROWS["test"][ARMS[0]]
    prob = [float(np.clip(rng.normal(0.75 if q.expected_tools else 0.3, 0.2), 0, 1)) for q in queries]
    prob[1] = prob[2]  # a tie
    rows = [RoutedRow(r.id, r.expected, r.ranked, p < threshold) for r, p in zip(base, prob)]
    return breakdowns.no_call_decisions(ARMS[0], rows, prob, queries, threshold), rows


def test_no_call_roc_risk_coverage_and_the_fitted_point_recomputed():
    decisions, rows = _decisions()
    call = decisions["is_call"].to_numpy()
    roc = breakdowns.roc_curve(decisions)
    assert (roc.iloc[0][["false_no_call_rate", "no_call_accuracy"]] == [0, 0]).all()
    assert (roc.iloc[-1][["false_no_call_rate", "no_call_accuracy"]] == [1, 1]).all()
    assert roc["false_no_call_rate"].is_monotonic_increasing and roc["no_call_accuracy"].is_monotonic_increasing
    auc = breakdowns.roc_auc(decisions)
    assert auc == pytest.approx(roc_auc_score(~call, -decisions["call_probability"]))
    assert auc == pytest.approx(np.trapezoid(roc["no_call_accuracy"], roc["false_no_call_rate"]))

    summary = breakdowns.no_call_summary(decisions, n_boot=200).iloc[0]
    metrics = summarize(rows, KS)
    assert summary["no_call_accuracy"] == pytest.approx(metrics["no_call_accuracy"])
    assert summary["false_no_call_rate"] == pytest.approx(metrics["false_no_call_rate"])
    assert (summary["n_call"], summary["n_no_call"]) == (int(call.sum()), int((~call).sum()))
    assert summary["auc_lo"] <= summary["auc"] <= summary["auc_hi"]
    lo, hi = wilson_interval(summary["no_call_accuracy_count"], summary["n_no_call"])
    assert (summary["no_call_accuracy_lo"], summary["no_call_accuracy_hi"]) == (pytest.approx(lo), pytest.approx(hi))

    routed = [r for r in rows if not r.no_call_predicted]
    wrong = [r for r in routed if not r.expected or r.ranked[0] not in r.expected]
    assert summary["coverage"] == pytest.approx(len(routed) / len(rows))
    assert summary["risk"] == pytest.approx(len(wrong) / len(routed))
    rc = breakdowns.risk_coverage(decisions)
    at_cut = rc[rc["cut"] >= 0.5].iloc[0]  # the fitted threshold routes what the smallest cut above it routes
    assert at_cut["coverage"] == pytest.approx(summary["coverage"]) and at_cut["risk"] == pytest.approx(summary["risk"])
    everything = rc.iloc[0]
    assert everything["coverage"] == 1 and everything["risk"] == pytest.approx(summary["risk_all_routed"])


def test_tool_recall_per_tool_over_its_single_tool_rows():
    rows = ROWS["test"][ARMS[0]]
    table = breakdowns.tool_recall(rows, MODULES, ks=(1, 5))
    assert list(table["tool"]) == TOOLS  # by module, then name
    for _, row in table.iterrows():
        single = [r for r in rows if r.expected == (row["tool"],)]
        assert row["n"] == len(single)
        assert row["recall@1_count"] == sum(r.ranked[0] == row["tool"] for r in single)
        assert row["recall@5_count"] == sum(row["tool"] in r.ranked[:5] for r in single)
        assert row["n_multi"] == sum(len(r.expected) > 1 and row["tool"] in r.expected for r in rows)
        if row["n"]:
            assert row["recall@1"] == pytest.approx(row["recall@1_count"] / row["n"])
            assert row["recall@1_lo"] <= row["recall@1"] <= row["recall@1_hi"]
    assert table["n"].sum() == sum(len(r.expected) == 1 for r in rows)


def test_holm_in_the_paired_table_is_at_least_the_raw_p_and_monotone():
    paired = ablation.paired_table(_results("test"), ARMS[0])
    assert {"p_holm", "holm_reject"} <= set(paired.columns)
    assert list(paired.columns).index("p_holm") == list(paired.columns).index("p_value") + 1
    raw = pd.DataFrame({"p_value": [0.001, 0.04, 0.03, float("nan"), 0.2, 0.0005, 0.01]})
    held = breakdowns.with_holm(raw)
    valid = held.dropna(subset=["p_value"]).sort_values("p_value")
    assert (valid["p_holm"] >= valid["p_value"]).all() and (valid["p_holm"] <= 1).all()
    assert valid["p_holm"].is_monotonic_increasing  # in the order of the raw p-values
    assert math.isnan(held["p_holm"].iloc[3]) and not held["holm_reject"].iloc[3]
    assert list(held["holm_reject"]) == list(held["p_holm"] < breakdowns.HOLM_ALPHA)
    assert held["p_holm"].iloc[5] == pytest.approx(0.0005 * 6)
    assert breakdowns.with_holm(held) is held  # a table that has them is kept as it is


def test_the_latency_pareto_is_drawn_on_the_choice_splits_not_on_test():
    from toolroute_lab.e02_ablation.latency_pareto import latency_pareto

    rows = []
    for arm, dev, test in (("fast", 0.80, 0.95), ("slow_good", 0.90, 0.70), ("slow_bad", 0.85, 0.99), ("tie_slower", 0.80, 0.99)):
        rows += [{"arm_label": arm, "split": "dev", "n_call": 100, "hit@1": dev},
                 {"arm_label": arm, "split": "tune", "n_call": 100, "hit@1": dev},
                 {"arm_label": arm, "split": "test", "n_call": 100, "hit@1": test, "hit@1_lo": test - 0.05, "hit@1_hi": test + 0.05}]
    timing = pd.DataFrame({"arm_label": ["fast", "slow_good", "slow_bad", "tie_slower"],
                           "route_ms_per_query_batched": [1.0, 10.0, 12.0, 5.0]})
    table = latency_pareto(pd.DataFrame(rows), timing).set_index("arm_label")
    assert table["pareto"].to_dict() == {"fast": True, "tie_slower": False, "slow_good": True, "slow_bad": False}
    assert list(table.index) == ["fast", "tie_slower", "slow_good", "slow_bad"]  # by time
    assert table.loc["slow_bad", "hit@1_test"] == 0.99 and table.loc["fast", "hit@1_dev+tune"] == 0.80


def test_the_pareto_figure_names_the_frontier_and_the_default_only():
    from toolroute_lab.e02_ablation.latency_pareto import latency_pareto
    from toolroute_lab.e02_ablation.plots import pareto_figure

    rows = []
    for arm, dev in (("fast", 0.80), ("slow_good", 0.90), ("slow_bad", 0.85), ("default", 0.84)):
        rows += [{"arm_label": arm, "split": s, "n_call": 100, "hit@1": dev} for s in ("dev", "tune")]
        rows.append({"arm_label": arm, "split": "test", "n_call": 100, "hit@1": dev, "hit@1_lo": dev - 0.05,
                     "hit@1_hi": dev + 0.05})
    timing = pd.DataFrame({"arm_label": ["fast", "slow_good", "slow_bad", "default"],
                           "route_ms_per_query_batched": [0.0, 10.0, 12.0, 20.0]})
    table = latency_pareto(pd.DataFrame(rows), timing)
    figure = pareto_figure(table, default_arm="default")
    every, near = figure.axes
    assert sorted(t.get_text() for t in near.texts) == ["default (default)", "fast", "slow_good"]  # slow_bad: beaten
    assert len(every.texts) == 0 and "All 4 arms" in every.get_title() and "dev + tune" in figure._suptitle.get_text()
    assert every.get_xscale() == near.get_xscale() == "log" and near.get_ylabel() == "hit@1"


# --- single vs multi-vector, unconfounded -------------------------------------------------------------------------

def _rows(hits: list[int], refused: tuple[int, ...] = ()) -> list[RoutedRow]:
    return [RoutedRow(f"q{i}", ("a",), ("a", "b") if hit else ("b", "a"), i in refused) for i, hit in enumerate(hits)]


def test_representation_table_pairs_each_aggregation_with_the_one_single_vector_arm(tmp_path):
    from toolroute_lab.e02_ablation.plots import representation_plot

    single = _rows([1, 1, 0, 0, 1, 0, 1, 0, 1, 1])
    better = _rows([1, 1, 1, 1, 1, 1, 1, 0, 1, 1])  # 3 rows only multi gets right, none only single
    worse = _rows([1, 0, 0, 0, 1, 0, 1, 0, 0, 1], refused=(0,))
    labels = {("dense", "single", a): "dense:single" for a in ("max", "top2")}
    labels[("dense", "single", "mean")] = "dense:single/mean"  # a label the grid did not run: the same arm stands in
    labels[("dense", "multi", "mean")] = "dense:multi/mean"
    rows_mean = {"dense:multi/mean": _rows([1, 1, 0, 0, 1, 0, 1, 0, 1, 1])}
    labels |= {("dense", "multi", "max"): "dense:multi/max", ("dense", "multi", "top2"): "dense:multi/top2",
               ("hybrid", "multi", "max"): "hybrid:multi/max"}  # no hybrid single arm: left out
    rows = {"dense:single": single, "dense:multi/max": better, "dense:multi/top2": worse, "hybrid:multi/max": better,
            **rows_mean}
    table = breakdowns.representation_table(rows, labels, n_boot=300)
    assert list(table["retriever"].unique()) == ["dense"] and len(table) == 6  # 3 aggregations x 2 metrics
    mean = table[(table.aggregation == "mean") & (table.metric == "hit@1")].iloc[0]
    assert mean["single"] == "dense:single" and mean["diff"] == 0.0
    up = table[(table.aggregation == "max") & (table.metric == "hit@1")].iloc[0]
    assert (up["single_only"], up["multi_only"], up["n"]) == (0, 3, 10)
    assert up["diff"] == pytest.approx(0.3) and up["p_mcnemar"] == pytest.approx(0.25)  # exact: 2 * 0.5**3
    down = table[(table.aggregation == "top2") & (table.metric == "right_call")].iloc[0]
    assert down["diff"] == pytest.approx(-0.3)  # the refused row that was a hit counts as wrong here
    hit_down = table[(table.aggregation == "top2") & (table.metric == "hit@1")].iloc[0]
    assert hit_down["diff"] == pytest.approx(-0.2)
    holm = table[table.metric == "hit@1"]
    assert (holm["p_holm"] >= holm["p_mcnemar"]).all()
    effects = breakdowns.representation_effects(table)
    main = effects[(effects.retriever == "dense") & (effects.metric == "hit@1")].iloc[0]
    assert main["main_effect"] == pytest.approx(0.1 / 3) and main["interaction"] == pytest.approx(0.5)
    representation_plot(table.assign(split="test"), "hit@1", tmp_path / "r.png")
    assert (tmp_path / "r.png").stat().st_size > 0
    empty = breakdowns.representation_table({}, labels)
    assert empty.empty and list(empty.columns) == list(breakdowns.REPRESENTATION_COLUMNS)
    representation_plot(empty.assign(split="test"), "hit@1", tmp_path / "e.png")


def test_card_content_catalogues_keep_k_examples_per_card_and_the_plot_draws_the_curve(tmp_path):
    import random

    from toolroute.cards import open_catalog
    from toolroute.config import toolcards_dir
    from toolroute_lab.e02_ablation import card_content
    from toolroute_lab.e02_ablation.plots import card_content_plot

    base = open_catalog(toolcards_dir("insurance"))
    two = card_content.with_examples(base, 2, random.Random(1))
    assert all(len(c.when_to_use) == min(2, len(base.cards[c.name].when_to_use)) for c in two)
    assert all(set(c.when_to_use) <= set(base.cards[c.name].when_to_use) for c in two)
    assert two.identity != base.identity and card_content.with_examples(base, card_content.ALL, random.Random(1)) is base
    again = card_content.with_examples(base, 2, random.Random(1))
    assert [c.when_to_use for c in again] == [c.when_to_use for c in two]  # seeded: the same draw
    assert card_content.card_content_curve(counts=[]).empty  # not run: an empty table with its columns
    table = pd.DataFrame([{"split": "test", "fields": f, "examples": k, "draw": d, "examples_kept_mean": m, "n": 267,
                           "hit@1": h + 0.01 * d, "right_call": h, "recall@5": 0.9, "mrr": 0.8}
                          for f in ("purpose + examples + tags", "examples only") for k, m, h in ((1, 1.0, 0.7), (4, 3.9, 0.85))
                          for d in range(3)])
    summary = card_content.curve_summary(table)
    assert list(summary["draws"]) == [3, 3, 3, 3] and summary["hit@1_low"].iloc[0] == pytest.approx(0.7)
    assert summary["hit@1"].iloc[0] == pytest.approx(0.71) and summary["hit@1_high"].iloc[0] == pytest.approx(0.72)
    card_content_plot(summary, tmp_path / "c.png")
    card_content_plot(card_content.curve_summary(table.iloc[:0]), tmp_path / "empty.png")
    assert (tmp_path / "c.png").stat().st_size > 0 and (tmp_path / "empty.png").stat().st_size > 0
