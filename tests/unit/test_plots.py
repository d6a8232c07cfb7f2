"""The figures say what they show: n in titles equals the rows drawn, intervals where the data has them,
bars from 0, legends off the data, distinct line styles, the default arm highlighted (issue 25)."""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib.colors as mcolors
import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection

from toolroute.evaluation.metrics import RoutedRow, wilson_interval
from toolroute_lab.e01_ingest import plots as ingest_plots
from toolroute_lab.e02_ablation import plots as ablation_plots
from toolroute_lab.e03_step_limits import plots as step_plots
from toolroute_lab.e04_ragas_eval import plots as ragas_plots
from toolroute_lab.e05_scale import plots as scale_plots
from toolroute_lab.e06_card_improvement import plots as card_plots
from toolroute_lab.shared import figures
from toolroute_lab.shared.arms import title as arm_title
from toolroute_lab.shared.notebook import show_figures_inline


def _renderer(fig):
    canvas = FigureCanvasAgg(fig)  # the figure comes back closed (pyplot lets go of it): draw it on its own canvas
    canvas.draw()
    return canvas.get_renderer()


def _legend_off_axes(fig, legend, axes) -> bool:
    r = _renderer(fig)
    box = legend.get_window_extent(r)
    return not any(box.overlaps(ax.get_window_extent(r)) for ax in axes)


def _ablation_table(labels, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for label in labels:
        row = {"arm_label": label}
        for k in (1, 3, 5):
            v = float(rng.uniform(0.3, 0.9))
            row.update({f"recall@{k}": v, f"recall@{k}_lo": v - 0.05, f"recall@{k}_hi": v + 0.05})
        v = float(rng.uniform(0.1, 0.9))
        row.update({"hit@1": v, "hit@1_lo": v - 0.04, "hit@1_hi": v + 0.04})
        rows.append(row)
    return pd.DataFrame(rows)


ARMS = [f"arm{i}" for i in range(21)] + ["hybrid:default"]


def test_wilson_interval_known_values():
    lo, hi = wilson_interval([0, 5, 10], [10, 10, 10])
    assert lo[0] == 0 and hi[0] == pytest.approx(0.2775, abs=1e-4)
    assert (lo[1], hi[1]) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    assert hi[2] == 1 and lo[2] == pytest.approx(0.7225, abs=1e-4)
    assert np.isnan(wilson_interval(0, 0)[0])


def test_recall_curves_distinct_styles_default_highlighted_legend_outside():
    fig = ablation_plots.recall_curves(_ablation_table(ARMS), [1, 3, 5], "test", default_arm="hybrid:default")
    ax = fig.axes[0]
    lines = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert len(lines) == 22
    styles = [(mcolors.to_hex(line.get_color()), line.get_linestyle()) for line in lines]
    assert len(set(styles)) == 22, "two arms share a colour and line style"
    default = next(line for line in lines if "default" in line.get_label())
    assert mcolors.to_hex(default.get_color()) == "#000000"
    assert default.get_linewidth() > max(line.get_linewidth() for line in lines if line is not default)
    assert sum(mcolors.to_hex(line.get_color()) == "#000000" for line in lines) == 1
    assert _legend_off_axes(fig, ax.get_legend(), [ax])


def test_line_styles_refuse_more_than_they_can_tell_apart():
    assert len(set(figures.line_styles(40))) == 40
    with pytest.raises(ValueError):
        figures.line_styles(41)


def test_metric_bars_from_zero_default_marked_dev_beside_test():
    test, dev = _ablation_table(ARMS, 0), _ablation_table(ARMS, 1)
    fig = ablation_plots.metric_bars(test, "hit@1", "test", default_arm="hybrid:default", dev=dev)
    ax = fig.axes[0]
    assert ax.get_xlim()[0] == 0
    bars = [p for p in ax.patches]
    assert len(bars) == 2 * len(ARMS)  # a dev bar beside every test bar
    assert sum(mcolors.to_hex(b.get_facecolor()) == "#000000" for b in bars) == 1
    assert all(b.get_x() == 0 for b in bars)
    bold = [t.get_text() for t in ax.get_yticklabels() if t.get_fontweight() == "bold"]
    assert len(bold) == 1 and bold[0].startswith("hybrid:default")
    dev_heights = sorted(b.get_width() for b in bars if mcolors.to_hex(b.get_facecolor()) == "#a9b8d3")
    assert dev_heights == pytest.approx(sorted(dev["hit@1"]))
    assert _legend_off_axes(fig, ax.get_legend(), [ax])


MODULES = {"a1": "A", "a2": "A", "b1": "B", "b2": "B", "c1": "C"}


def _rows():
    """Single-tool misses a1→b1 ×2, b2→a2, c1→a1; a multi-tool miss; a no-call row routed; a call refused."""
    spec = [
        ("q1", ("a1",), ("a1", "b1"), False), ("q2", ("a1",), ("b1", "a1"), False), ("q3", ("a1",), ("b1",), False),
        ("q4", ("b2",), ("a2",), False), ("q5", ("c1",), ("a1",), False), ("q6", ("b1",), ("b1",), True),
        ("q7", ("a1", "b1"), ("c1", "a1"), False), ("q8", ("a2", "b2"), ("b2",), False),
        ("q9", (), ("a1",), False), ("q10", (), ("c1",), True), ("q11", ("c1",), ("c1",), False),
    ]
    return [RoutedRow(i, e, r, n) for i, e, r, n in spec]


def test_confusions_plot_every_miss_in_order_and_says_what_is_left_out():
    outcomes = ablation_plots.routing_outcomes(_rows(), MODULES)
    misses = ablation_plots.single_tool_misses(outcomes)
    assert list(zip(misses.expected, misses.predicted, misses["count"])) == [
        ("a1", "b1", 2), ("b2", "a2", 1), ("c1", "a1", 1)]  # by count, then by name
    errors = ablation_plots.error_counts(outcomes)
    assert errors == {"single_rows": 7, "single_misses": 4, "multi_rows": 2, "multi_misses": 1, "no_call_rows": 2,
                      "no_call_routed": 1, "call_rows": 9, "call_refused": 1}
    fig = ablation_plots.confusion_plot(outcomes, "arm", "test")
    assert len(fig.axes) == 2  # no colour bar
    matrix_ax, miss_ax = fig.axes
    assert sum(p.get_width() for p in miss_ax.patches) == errors["single_misses"]
    assert f"all {errors['single_misses']} of {errors['single_rows']}" in miss_ax.get_title()
    title = fig._suptitle.get_text()
    assert "4 single-tool top-1 misses" in title and "1 of 2 multi-tool" in title
    assert "1 of 2 no-call rows routed" in title and "1 of 9 call rows refused" in title
    assert "2 multi-tool rows not in the matrix" in matrix_ax.get_title()
    matrix = ablation_plots.module_confusion(outcomes)
    assert int(matrix.values.sum()) == errors["single_rows"] + errors["no_call_rows"]
    assert matrix.loc["B", ablation_plots.NO_CALL] == 1 and matrix.loc[ablation_plots.NO_CALL, "A"] == 1
    numbers = [int(t.get_text()) for t in matrix_ax.texts]
    assert sum(numbers) == int(matrix.values.sum())


def test_outcomes_from_a_failure_table_match_the_routed_rows():
    rows = _rows()
    queries = [SimpleNamespace(id=r.id, expected_tools=list(r.expected)) for r in rows]
    wrong = [r for r in rows if (r.expected and r.ranked[0] not in r.expected) or r.no_call_predicted != (not r.expected)]
    failures = pd.DataFrame([{"id": r.id, "expected": ",".join(r.expected) or "(no call)", "top3": ",".join(r.ranked[:3]),
                              "no_call_predicted": r.no_call_predicted} for r in wrong])
    rebuilt = ablation_plots.outcomes_from_failures(failures, queries, MODULES)
    direct = ablation_plots.routing_outcomes(rows, MODULES)
    assert ablation_plots.error_counts(rebuilt) == ablation_plots.error_counts(direct)
    pd.testing.assert_frame_equal(ablation_plots.module_confusion(rebuilt), ablation_plots.module_confusion(direct))
    pd.testing.assert_frame_equal(ablation_plots.single_tool_misses(rebuilt), ablation_plots.single_tool_misses(direct))


def test_no_call_scores_calib_legend_off_the_bars_ylabel_and_misrouted_rows_visible():
    rng = np.random.default_rng(0)
    call = np.r_[np.ones(150, bool), np.zeros(30, bool)]
    prob = np.where(call, rng.uniform(0.7, 1.0, 180), rng.uniform(0.0, 0.2, 180))
    prob[-2:] = 0.95  # two no-call rows above the threshold, among the call rows
    scores = pd.DataFrame({"is_call": call, "dense_top1": rng.uniform(0.8, 0.95, 180), "call_probability": prob})
    fig = ablation_plots.no_call_scores(scores, 0.33, "arm", "test")
    axes = fig.axes
    legend = fig.legends[0]
    assert any("fitted on calib" in t.get_text() for t in legend.get_texts())
    assert _legend_off_axes(fig, legend, axes)
    assert all(ax.get_ylabel() for ax in axes) and all(ax.get_yscale() == "log" for ax in axes)
    assert "2 no-call rows above the threshold" in axes[1].get_title()
    call_bars = [p for p in axes[1].patches if p.get_zorder() == 2]
    outline = [p for p in axes[1].patches if p.get_zorder() == 3]
    assert call_bars and outline  # the no-call outline is drawn over the call bars, on a log axis


def test_chunk_length_bins_end_at_the_limit():
    edges = ingest_plots.chunk_length_bins(500, 500)
    assert edges[-1] == 500 and edges[0] == 0
    assert ingest_plots.chunk_length_bins(500, 530)[-1] == 550  # a longer chunk shows right of the limit
    lengths = pd.DataFrame({"collection": ["terms"] * 4, "document": ["d"] * 4, "chars": [120, 480, 499, 500]})
    fig = ingest_plots.chunk_length_plot(lengths, 500, 100)
    bars = [p for p in fig.axes[0].patches if p.get_height() > 0]
    assert max(p.get_x() + p.get_width() for p in bars) == pytest.approx(500)
    assert sum(p.get_height() for p in bars) == 4


def test_hit_rate_mrr_on_its_own_axis_with_wilson_cis_per_collection():
    rows = []
    for collection, n in (("terms", 20), ("product_info", 70), ("all", 90)):
        for size in (300, 500):
            rows.append({"chunk_size": size, "collection": collection, "n": n, "hit@1": 0.5, "hit@5": 0.9, "mrr": 0.7})
    fig = ingest_plots.hit_rate_plot(pd.DataFrame(rows), [1, 5])
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[:3] == ["all (90 questions)", "terms (20 questions)", "product_info (70 questions)"]
    assert "MRR" in fig.axes[-1].get_ylabel() and "share" not in fig.axes[-1].get_ylabel()
    assert all("MRR" not in ax.get_ylabel() for ax in fig.axes[:3])
    terms = fig.axes[1]
    caps = [c for c in terms.containers if c.has_yerr]
    assert len(caps) == 2
    lo, hi = wilson_interval(10, 20)
    segments = caps[0].lines[2][0].get_segments()
    assert segments[0][0][1] == pytest.approx(lo) and segments[0][1][1] == pytest.approx(hi)


def _runs():
    rows = []
    for cap in (1, 2, 3):
        for i in range(10):
            rows.append({"domain": "insurance", "task_id": f"t{i}", "top_k": 5, "cap": cap, "chain_length": i % 2 + 1,
                         "completed": i < cap * 3, "total_tokens": 100 * cap, "prompt_tokens": 90 * cap,
                         "llm_calls": cap, "seconds": 1.0 * cap, "reused_from_cap": 1 if cap > 1 and i < 4 else 0})
    return pd.DataFrame(rows)


def test_completion_plot_draws_wilson_intervals_per_point():
    runs = _runs()
    fig = step_plots.completion_plot(runs)
    ax = fig.axes[0]
    pooled = next(c for c in ax.containers if c.get_label().startswith("all tasks"))
    lo, hi = wilson_interval(3, 10)  # cap 1: 3 of 10 tasks completed
    segment = pooled.lines[2][0].get_segments()[0]
    assert segment[0][1] == pytest.approx(lo) and segment[1][1] == pytest.approx(hi)
    assert _legend_off_axes(fig, ax.get_legend(), [ax])


def test_completion_plot_draws_one_panel_per_arm_in_reading_order():
    runs = _runs()
    arms = pd.concat([runs.assign(arm=a) for a in ("gold_replay", "routed@5", "oracle")], ignore_index=True)
    fig = step_plots.completion_plot(arms)
    assert [ax.get_title() for ax in fig.axes] == [arm_title("routed@5"), arm_title("oracle"), arm_title("gold_replay")]
    assert fig.axes[0].get_ylim() == fig.axes[2].get_ylim()  # one scale: levels compare across panels
    legend = fig.axes[-1].get_legend()
    assert legend is not None and _legend_off_axes(fig, legend, fig.axes)
    labels = [t.get_text() for t in legend.get_texts()]
    assert "all tasks (n=10)" in labels and not any("routed" in t for t in labels)  # the arm is the panel, not a line


def test_cost_plot_says_how_many_rows_are_copies():
    runs = _runs()
    fig = step_plots.cost_plot(runs)
    assert f"{step_plots.copied_rows(runs)} of {len(runs)} rows are copies" in fig._suptitle.get_text()
    assert step_plots.copied_rows(runs) == 8
    assert "each run at its cap" in step_plots.cost_plot(runs.drop(columns=["reused_from_cap"]))._suptitle.get_text()


def test_metric_plot_shows_every_item_n_in_labels_and_a_ci():
    scores = pd.DataFrame({"kind": ["scenario"] * 46 + ["rag"] * 6, "id": range(52),
                           "tool_call_accuracy": [0.0] * 40 + [1.0] * 6 + [np.nan] * 6,
                           "chrf": np.linspace(0, 0.5, 52)})
    fig = ragas_plots.metric_plot(scores)
    ax = fig.axes[0]
    assert ax.get_title() == "tool_call_accuracy"
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["scenario\nn=46", "rag\nn=0"]
    assert sum(int(t.get_text()) for t in ax.texts) == 46  # every item counted, none hidden behind another
    assert sorted(int(t.get_text()) for t in ax.texts) == [6, 40]
    assert [c for c in ax.containers if getattr(c, "has_yerr", False)]  # mean with its CI


def _scale_table():
    rows = []
    for size in (54, 500, 2628):
        for arm in ("dense", "hybrid"):
            rows.append({"size": size, "arm": arm, "hit@1": 0.8, "recall@5": 0.95, "no_call_accuracy": 0.8,
                         "false_no_call_rate": 0.02, "latency_p50_ms": 20.0, "latency_p95_ms": 30.0,
                         "n_call": 229, "n_no_call": 38, "latency_passes": 1, "latency_queries": 100})
    return pd.DataFrame(rows)


def test_scale_plot_labels_the_threshold_draws_bands_says_single_pass_and_plots_bfcl():
    bfcl = pd.DataFrame([{"arm": a, "category": c, "n": n, "tools": 894, "hit@1": 0.5, "recall@5": 0.8}
                         for a in ("dense", "bm25") for c, n in (("all", 1253), ("multiple", 200))])
    fig = scale_plots.plot_scale(_scale_table(), bfcl=bfcl)
    hit, recall, no_call, top1, latency, bfcl_ax = fig.axes
    assert any("0.9" in line.get_label() for line in hit.get_lines())
    assert any("0.9" in t.get_text() for t in hit.texts)
    bands = lambda ax: len([c for c in ax.collections if isinstance(c, PolyCollection)])  # noqa: E731
    assert bands(hit) == bands(recall) == 2 and bands(no_call) == 4  # per arm; no-call: accuracy and false no-call
    assert "one pass" in latency.get_title() and "100 queries" in latency.get_title()
    assert "not in these tables" in [t.get_text() for t in top1.texts]  # an old table without the column
    assert "n=1253" in [t.get_text() for t in bfcl_ax.get_xticklabels()][0]
    assert "n=229" in hit.get_title() and "n=38" in no_call.get_title()
    assert [line.get_color() for line in hit.get_lines() if "hybrid" in line.get_label()] == [figures.DEFAULT_COLOR]


def test_scale_plot_draws_both_series_with_bootstrap_bands_and_the_median_of_passes():
    def series(name, sizes, passes):
        return pd.DataFrame([{**row, "size": size, "series": name, "split": split, "hit@1_lo": 0.7, "hit@1_hi": 0.9,
                              "latency_passes": passes, "latency_p50_min_ms": 18.0, "latency_p50_max_ms": 22.0,
                              "top1_distractor": 0.05, "distractor_in_top5": 0.2, "latency_load_avg": 3.5}
                             for row in _scale_table().drop(columns="size").drop_duplicates("arm").to_dict("records")
                             for size in sizes for split in ("test", "dev")])
    korean, bfcl = series("korean", (54, 104, 268), 3), series("bfcl", (54, 500, 2628), 1)
    fig = scale_plots.plot_scale(bfcl, korean=korean)
    hit, _, _, top1, latency, bfcl_ax = fig.axes
    labels = [line.get_label() for line in hit.get_lines()]
    assert sum("Korean" in label for label in labels) == 2 and sum("BFCL" in label for label in labels) == 2
    assert all(len(line.get_xdata()) == 3 for line in hit.get_lines()[:4])  # the test split only, not dev too
    lo = [c for c in hit.collections if isinstance(c, PolyCollection)][0].get_paths()[0].vertices[:, 1].min()
    assert lo == pytest.approx(0.7)  # the table's bootstrap CI, not a Wilson interval
    assert len(top1.get_lines()) == 8  # on top and in the top 5, per series and arm
    assert "Korean: median of 3 passes" in latency.get_title() and "BFCL: one pass" in latency.get_title()
    assert "load average 3.5–3.5" in latency.get_title()  # how busy the cores were while timing
    assert hit.get_xlim() == top1.get_xlim() == latency.get_xlim()
    assert "not run" in bfcl_ax.texts[0].get_text()


def test_card_improvement_plots_paired_differences_with_the_hit1_n_and_the_cost():
    aug = pd.DataFrame([
        {"split": "test", "arm": "authored cards", "n": 267, "n_call": 229, "hit@1": 0.860, "hit@1_diff": np.nan,
         "hit@1_diff_lo": np.nan, "hit@1_diff_hi": np.nan, "index_seconds": 9.1, "generation_seconds": np.nan},
        {"split": "test", "arm": "authored + synthetic", "n": 267, "n_call": 229, "hit@1": 0.856, "hit@1_diff": -0.004,
         "hit@1_diff_lo": -0.022, "hit@1_diff_hi": 0.013, "index_seconds": 15.3, "generation_seconds": 754.7}])
    rerank = pd.DataFrame([
        {"split": "test", "arm": "first stage", "n": 267, "n_call": 229, "hit@1": 0.860, "seconds_per_query_p50": 0.02,
         "hit@1_diff": np.nan, "hit@1_diff_lo": np.nan, "hit@1_diff_hi": np.nan},
        {"split": "test", "arm": "+ LLM rerank of top 8", "n": 267, "n_call": 229, "hit@1": 0.852,
         "seconds_per_query_p50": 9.18, "hit@1_diff": -0.009, "hit@1_diff_lo": -0.044, "hit@1_diff_hi": 0.022}])
    fig = card_plots.card_improvement_plot(aug, rerank, augmentation_cost={"examples_added": 59, "llm_calls": 54})
    diff_ax, cost_ax = fig.axes
    labels = [t.get_text() for t in diff_ax.get_yticklabels()]
    assert len(labels) == 2 and all("over 229 call rows of 267" in label for label in labels)
    lo, hi = diff_ax.get_xlim()
    assert hi - lo < 0.2  # the differences, not 0-1 bars
    assert cost_ax.get_xscale() == "log"
    assert sorted(p.get_width() for p in cost_ax.patches) == [0.02, 9.18]
    assert "755 s generation" in cost_ax.get_title()


def test_show_figures_inline_is_a_no_op_outside_a_kernel():
    assert show_figures_inline() is False


# --- 03 / 04 arms (issue 24, build 1) ---------------------------------------------------------------------------

def _arm_rows(tokens=(600.0, 1500.0, 400.0, 12000.0, 300.0)) -> pd.DataFrame:
    """An `arms.arm_table` at one cap, as by_arm.csv holds it: 20 runs per arm."""
    arms = ["routed@1", "routed@5", "oracle", "all_tools", "gold_replay"]
    return pd.DataFrame({"arm": arms, "runs": 20, "over_context": 0, "completed": [4, 9, 12, 7, 16],
                         "total_tokens": list(tokens)})


def test_arm_cost_plot_from_a_committed_table_has_wilson_bars_a_ceiling_and_a_log_axis():
    table = _arm_rows()
    fig = figures.arm_cost_plot(table)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_ylim() == (0, 1.03)
    ceiling = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert len(ceiling) == 1 and ceiling[0].get_ydata()[0] == pytest.approx(16 / 20)
    lo, hi = wilson_interval(12, 20)
    bars = [c for c in ax.collections if len(c.get_segments()) == 1 and c.get_segments()[0][0][0] == 400.0]
    ys = sorted(bars[0].get_segments()[0][:, 1])
    assert ys == pytest.approx([lo, hi])  # the oracle's vertical bar is its Wilson interval
    assert _legend_off_axes(fig, ax.get_legend(), fig.axes)
    assert "20 runs per arm" in ax.get_title()


def test_arm_cost_plot_is_linear_when_a_cost_is_zero():
    fig = figures.arm_cost_plot(_arm_rows(tokens=(0.0, 0.0, 0.0, 0.0, 0.0)))  # the model-free replay reports no tokens
    assert fig.axes[0].get_xscale() == "linear"


def _no_call_fixture():
    from toolroute_lab.e02_ablation import breakdowns

    rng = np.random.default_rng(3)
    queries = [SimpleNamespace(id=f"q{i}", expected_tools=() if i % 5 == 0 else ("a1",), kind="") for i in range(60)]
    frames = []
    for j, arm in enumerate(["bm25", "dense", "hybrid:default"]):
        prob = [float(rng.uniform(0.0, 0.5) if not q.expected_tools else rng.uniform(0.3 + 0.1 * j, 1.0)) for q in queries]
        rows = [RoutedRow(q.id, q.expected_tools, ("a1", "b1") if rng.uniform() < 0.8 else ("b1", "a1"), p < 0.35)
                for q, p in zip(queries, prob)]
        frames.append(breakdowns.no_call_decisions(arm, rows, prob, queries, 0.35))
    decisions = pd.concat(frames, ignore_index=True)
    return decisions, breakdowns.no_call_summary(decisions, n_boot=100)


def test_no_call_curves_n_equals_the_rows_default_black_and_thick_points_with_cis():
    decisions, summary = _no_call_fixture()
    fig = ablation_plots.no_call_curves(decisions, summary, "test", default_arm="hybrid:default")
    roc_ax, zoom_ax, rc_ax = fig.axes
    title = fig._suptitle.get_text()
    assert "60 rows per arm (48 call, 12 no-call), 3 arms" in title
    assert (decisions.groupby("arm_label").size() == 60).all()
    assert "(of 48)" in roc_ax.get_xlabel() and "(of 12)" in roc_ax.get_ylabel()
    assert "fitted on calib" in roc_ax.get_title()
    curves = [line for line in roc_ax.get_lines() if not line.get_label().startswith("_") and "AUC" in line.get_label()]
    assert len(curves) == 3
    default = next(line for line in curves if "(default)" in line.get_label())
    assert mcolors.to_hex(default.get_color()) == "#000000"
    assert default.get_linewidth() > max(line.get_linewidth() for line in curves if line is not default)
    auc = summary.set_index("arm_label").loc["hybrid:default", "auc"]
    assert f"AUC {auc:.3f}" in default.get_label()
    assert any("budget 0.03" in line.get_label() for line in roc_ax.get_lines())
    # every arm's operating point drawn with error bars on both panels
    assert all(len(axis.containers) == 3 for axis in fig.axes)
    assert zoom_ax.get_xlim() == (0, 0.1) and "up to 0.1" in zoom_ax.get_title()
    assert _legend_off_axes(fig, fig.legends[0], fig.axes)


def test_tool_recall_plot_n_in_labels_and_title_equal_the_rows():
    from toolroute_lab.e02_ablation import breakdowns

    rows = _rows()
    table = breakdowns.tool_recall(rows, MODULES, ks=(1, 5))
    fig = ablation_plots.tool_recall_plot(table, "arm", "test")
    ax = fig.axes[0]
    single = sum(len(r.expected) == 1 for r in rows)
    drawn = table[table["n"] > 0]
    assert f"{single} single-tool rows over {len(drawn)} tools" in ax.get_title()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert sum(int(label.split("n=")[1].rstrip(")")) for label in labels) == single
    assert ax.get_xlim()[0] == 0 and len(ax.patches) == 2 * len(drawn)
    assert _legend_off_axes(fig, fig.legends[0], [ax])
