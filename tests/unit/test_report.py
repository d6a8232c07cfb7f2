"""The run report: verdicts first, every target read from the table it names, tables whole, p-values
readable, its own row in the run status, and the committed reference report built that way.

- `targets.verdicts` lists every target once; each value equals the CSV and column the target names
  (read here independently), its CI comes from the table or a Wilson interval, and a CI that crosses
  the goal is noted (the false no-call rate's upper bound against the 3% budget).
- `report.table_html` shows every row and column (no pandas "..."), `format_p` never prints 0 or
  scientific notation, `timings` shows the report as "this notebook" (not "running / NaN").
- The section order is findings, figures, tables; every experiment of the reference gets 3–6 sentences.
- results/reference/report.html opens with the verdict table, truncates nothing, has no stderr lines and
  no `e+00` p-values, and its verdicts.csv equals what the targets read from the reference tables.
"""

import math
import re
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from toolroute.config import ROOT
from toolroute.evaluation.metrics import holm_adjusted, wilson_interval
from toolroute_lab.run import declared
from toolroute_lab.e02_ablation import findings as ablation_findings
from toolroute_lab.e03_step_limits import findings as step_findings
from toolroute_lab.e04_ragas_eval import findings as ragas_findings
from toolroute_lab.e05_scale import findings as scale_findings
from toolroute_lab.e06_card_improvement import findings as card_findings
from toolroute_lab.e07_report import report
from toolroute_lab.e07_report import targets
from toolroute_lab.run.pipeline import export_html
from toolroute.routing import RouterConfig

REFERENCE = ROOT / "results" / "reference"
DEFAULT_ARM = RouterConfig().label  # the default router, the arm the report presents


def _read_independently(target: targets.Target) -> pd.DataFrame:
    table = pd.read_csv(target.path(REFERENCE, ROOT))
    for column, value in target.rows:
        value = DEFAULT_ARM if value == targets.DEFAULT_ARM else value
        table = table[table[column].astype(str) == str(value)]
    return table


# --- statistics --------------------------------------------------------------------------------------------------

def test_wilson_interval_matches_known_values():
    lo, hi = wilson_interval(0, 14)
    assert lo == 0.0 and hi == pytest.approx(0.2153, abs=1e-4)
    lo, hi = wilson_interval(94, 98)
    assert lo == pytest.approx(0.8997, abs=1e-4) and hi == pytest.approx(0.9840, abs=1e-4)
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    with pytest.raises(ValueError):
        wilson_interval(5, 4)


def test_holm_adjusts_in_order_and_keeps_nan():
    adjusted = holm_adjusted([0.01, 0.04, float("nan"), 0.03])
    assert adjusted[0] == pytest.approx(0.03) and adjusted[3] == pytest.approx(0.06) and adjusted[1] == pytest.approx(0.06)
    assert math.isnan(adjusted[2])


# --- the verdict table -------------------------------------------------------------------------------------------

def test_every_target_value_equals_the_csv_it_names():
    verdicts = targets.verdicts(REFERENCE, DEFAULT_ARM)
    assert len(verdicts) == len(targets.TARGETS)
    for target, (_, row) in zip(targets.TARGETS, verdicts.iterrows()):
        assert row["target"].startswith(target.name)
        assert target.table in row["source"] and target.column in row["source"]
        if row["verdict"] == "not measured":
            table = target.path(REFERENCE, ROOT)
            assert not table.is_file() or target.column not in pd.read_csv(table).columns or _read_independently(target).empty
            continue
        rows = _read_independently(target)
        if "arm" in rows.columns and rows["arm"].nunique() > 1:  # the reference's agent: the router's top 5
            rows = rows[rows["arm"] == "routed@5"]
            assert "arm = routed@5" in row["source"]
        assert len(rows) == 1, target.name
        assert row["value"] == pytest.approx(float(rows[target.column].iloc[0]), abs=0), target.name
        assert row["verdict"] == ("met" if target.met(row["value"]) else "missed")
        if f"{target.column}_lo" in rows.columns:
            assert row["ci"] == "bootstrap" and row["ci_low"] == rows[f"{target.column}_lo"].iloc[0]
        elif target.n:
            assert row["ci"] == "Wilson"
            assert (row["ci_low"], row["ci_high"]) == wilson_interval(int(rows[target.count].iloc[0]), int(rows[target.n].iloc[0]))


def test_a_target_over_agent_arms_is_judged_on_the_agent_as_it_runs(tmp_path):
    (tmp_path / "03_step_limits").mkdir()
    pd.DataFrame({"arm": ["gold_replay", "oracle", "routed@1", "routed@3", "routed@3"], "top_k": [0, 0, 1, 3, 3],
                  "chain_length": [2, 2, 2, 2, 3], "cap": [3] * 5, "runs": [10, 10, 10, 10, 4],
                  "completed": [9, 6, 0, 1, 0], "completion": [0.9, 0.6, 0.0, 0.1, 0.0]}
                 ).to_csv(tmp_path / "03_step_limits" / "by_length.csv", index=False)
    (tmp_path / "manifest.json").write_text('{"notebooks": {"03_step_limits": {"parameters": {"top_ks": [3]}}}}')
    chain = next(t for t in targets.TARGETS if t.table == "03_step_limits/by_length.csv")
    table = targets.verdicts(tmp_path, DEFAULT_ARM, targets=(chain,))
    assert list(table["target"]) == [chain.name] and list(table["value"]) == [0.1] and list(table["n"]) == [10]
    assert list(table["verdict"]) == ["missed"] and "arm = routed@3" in table["source"].iloc[0]


def test_the_targets_are_declared_once_with_their_source():
    names = [t.name for t in targets.TARGETS]
    assert len(names) == len(set(names))
    for t in targets.TARGETS:
        assert t.goal in (targets.AT_LEAST, targets.AT_MOST) and t.issue > 0 and t.table.endswith(".csv") and t.rows
    expected = {"right_call": 0.92, "hit@1": 0.92, "recall@5": 0.99, "mrr": 0.95, "no_call_accuracy": 0.95,
                "false_no_call_rate": 0.03}
    router = {t.column: t.threshold for t in targets.TARGETS if t.table == "02_toolcard_ablation/ablation_test.csv"}
    assert router == expected


def test_false_no_call_is_noted_when_its_ci_exceeds_the_budget():
    verdicts = targets.verdicts(REFERENCE, DEFAULT_ARM).set_index("target")
    row = verdicts.loc["false no-call rate (real calls refused), test"]
    assert row["ci_high"] > 0.03 and row["verdict"] == "met"
    assert f"upper bound {row['ci_high']:.3f} exceeds the 0.030 budget" in row["note"]
    shown = targets.verdict_display(verdicts.reset_index()).set_index("target")
    assert shown.loc["false no-call rate (real calls refused), test", "95% CI"].startswith(f"[{row['ci_low']:.3f}, ")


def test_a_target_the_run_does_not_measure_is_listed_not_dropped(tmp_path):
    missing = targets.Target("x", "02_toolcard_ablation/ablation_test.csv", "no_such_column",
                             (("arm_label", targets.DEFAULT_ARM),), targets.AT_LEAST, 0.5, issue=1)
    absent = targets.Target("y", "99_none/t.csv", "v", (("a", 1),), targets.AT_MOST, 0.5, issue=1)
    table = targets.verdicts(REFERENCE, DEFAULT_ARM, targets=(missing, absent))
    assert list(table["verdict"]) == ["not measured", "not measured"]
    assert "no no_such_column column" in table["note"].iloc[0] and "not in this run" in table["note"].iloc[1]


# --- formatting --------------------------------------------------------------------------------------------------

def test_p_values_read_as_numbers_not_zeros():
    assert report.format_p(0.0) == "< 0.001" and report.format_p(0.0008) == "< 0.001"
    assert report.format_p(0.0123) == "0.012" and report.format_p(float("nan")) == "–" and report.format_p(None) == "–"
    paired = pd.read_csv(REFERENCE / "02_toolcard_ablation" / "paired_test.csv")
    html = report.table_html(report.paired_with_holm(paired))
    assert "e+00" not in html and "e-0" not in html and "&lt; 0.001" in html and "p (Holm)" in html


def test_tables_are_shown_whole():
    big = pd.DataFrame({"arm": [f"arm{i}" for i in range(200)], "x": [i / 7 for i in range(200)],
                        **{f"c{j}": range(200) for j in range(40)}})
    html = report.table_html(big)
    assert html.count("<tr") == 201 and "arm199" in html and "c39" in html
    assert "..." not in html and "…" not in html


def test_the_run_status_shows_the_report_as_this_notebook():
    run = report.RunOutputs(REFERENCE, manifest={"notebooks": {
        "07_report": {"status": "running"}, "01_ingest": {"status": "ok", "seconds": 289.0}}})
    table = report.timings(run).set_index("notebook")
    assert list(table.index) == ["01_ingest", "07_report"]
    assert table.loc["07_report", "status"] == "this notebook" and table.loc["07_report", "seconds"] == "–"
    assert "nan" not in report.table_html(report.timings(run)).lower()


def test_export_leaves_out_stderr(tmp_path):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text="llama_context: n_ctx_seq (512)\n"),
                    nbformat.v4.new_output("stream", name="stdout", text="kept line\n")]
    nb.cells = [cell]
    path = tmp_path / "r.ipynb"
    nbformat.write(nb, str(path))
    html = export_html(path, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "kept line" in html and "llama_context" not in html


# --- sections ----------------------------------------------------------------------------------------------------

def test_each_reference_section_has_findings_then_figures_then_tables():
    run = report.load_run(REFERENCE)
    for items in report.report_sections(run, DEFAULT_ARM):
        kinds = ["text" if isinstance(i, str) else "table" if isinstance(i, pd.DataFrame) else "figure" for i in items]
        assert kinds[:2] == ["text", "text"], items[0]
        assert kinds == sorted(kinds, key=["text", "figure", "table"].index), items[0]
        sentences = [line for line in items[1].splitlines() if line.startswith("- ")]
        assert 3 <= len(sentences) <= 7, (items[0], sentences)  # 02 answers two questions: the arms, single vs multi


def test_findings_follow_the_tables(tmp_path):
    """The numbers in the text come from the tables: change a table and the sentence changes."""
    run = report.load_run(REFERENCE)
    by_scenario = run.table("04_ragas_eval", "by_scenario")
    zero = ragas_findings.zero_consultations(by_scenario)
    assert len(zero) == int(((by_scenario["tool_call_accuracy"] == 0) & (by_scenario["fact_presence"] == 0)).sum())
    assert f"{len(zero)} of {len(by_scenario)} consultations score 0 on both" in " ".join(ragas_findings.ragas(run))
    changed = run.tables["05_scale"]["scale"].copy()
    changed.loc[changed.index[-1], "mrr"] = 0.5
    run.tables["05_scale"] = {**run.tables["05_scale"], "scale": changed}
    assert "→ 0.5000" in " ".join(scale_findings.scale(run))


# --- the committed reference report ------------------------------------------------------------------------------

def _reference_html() -> str:
    return (REFERENCE / "report.html").read_text(encoding="utf-8")


def test_reference_report_opens_with_the_verdict_table():
    html = _reference_html()
    first_table = html.index("<table")
    assert "Verdicts" in html[:first_table] and html.index("Verdicts") < html.index("Headline")
    assert "read from" in html[first_table:html.index("</table>", first_table)]


def test_reference_report_is_not_truncated_and_reads_cleanly():
    html = _reference_html()
    assert not re.search(r"<td>\s*(\.\.\.|…)\s*</td>", html) and "rows ×" not in html
    assert "e+00" not in html and "llama_context" not in html
    status = html[html.rindex("Run status"):]
    assert "this notebook" in status and ">running<" not in status and ">nan<" not in status.lower()


def test_reference_verdicts_csv_equals_the_targets_read_from_the_reference():
    committed = pd.read_csv(REFERENCE / "verdicts.csv")
    fresh = targets.verdicts(REFERENCE, DEFAULT_ARM)
    assert list(committed["target"]) == list(fresh["target"])
    pd.testing.assert_series_equal(committed["value"], fresh["value"], check_exact=False, rtol=1e-12)
    assert list(committed["verdict"]) == list(fresh["verdict"])


def test_ablation_findings_read_the_breakdown_tables():
    """02's sentences on row kinds, splits, the no-call AUC, Holm and the writers come from its new tables."""
    run = report.load_run(REFERENCE)
    tables = run.tables["02_toolcard_ablation"]
    text = " ".join(ablation_findings.ablation(run, DEFAULT_ARM))
    kinds = tables["by_row_kind"]
    multi = kinds[(kinds.arm_label == DEFAULT_ARM) & (kinds.split == "test") & (kinds.kind == "multi")].iloc[0]
    assert f"multi-tool Hit@1 {multi['hit@1']:.3f}" in text and "Recall@1 is 0 on them by definition" in text
    by_split = tables["ablation_by_split"]
    for _, r in by_split[by_split.arm_label == DEFAULT_ARM].iterrows():
        assert f"{r['split']} {r['hit@1']:.3f}" in text
    auc = tables["no_call_roc_test"].set_index("arm_label").loc[DEFAULT_ARM, "auc"]
    assert f"ROC AUC {auc:.3f}" in text
    paired = tables["paired_test"]
    assert f"after Holm's correction {int(paired['holm_reject'].sum())} remain" in text
    writers = tables["by_writer"]
    b = writers[(writers.arm_label == DEFAULT_ARM) & writers["hit@1_gap"].notna()].iloc[0]
    assert f"a gap of {b['hit@1_gap']:+.3f}" in text
    changed = writers.copy()
    changed.loc[b.name, "hit@1_gap"] = 0.5
    run.tables["02_toolcard_ablation"] = {**tables, "by_writer": changed}
    assert "a gap of +0.500" in " ".join(ablation_findings.ablation(run, DEFAULT_ARM))


def test_an_arm_nominally_better_than_the_default_is_named_even_when_holm_drops_it():
    """Issue 25: a difference with p < 0.05 before correction in favour of another arm (hybrid single vs multi
    +0.039 in an earlier run) is reported by name, with its CI, whether or not it survives Holm."""
    run = report.load_run(REFERENCE)
    tables = run.tables["02_toolcard_ablation"]
    paired = tables["paired_test"].drop(columns=["p_holm", "holm_reject"]).copy()
    row = paired.index[(paired.arm_label == "hybrid:e5-small:single/top2") & (paired.metric == "hit@1")][0]
    paired.loc[row, ["diff", "ci_low", "ci_high", "p_value"]] = [0.039, 0.004, 0.074, 0.03]
    run.tables["02_toolcard_ablation"] = {**tables, "paired_test": paired}
    text = " ".join(ablation_findings.ablation(run, DEFAULT_ARM))
    assert "hybrid:e5-small:single/top2 hit@1 +0.039 [0.004, 0.074]" in text
    assert "after Holm's correction" in text and "0 in favour of the other arm." in text  # p 0.03 of 63 does not hold


def test_the_paired_table_of_the_reference_carries_holm_and_the_report_shows_it():
    paired = pd.read_csv(REFERENCE / "02_toolcard_ablation" / "paired_test.csv")
    assert list(paired["p_holm"]) == pytest.approx(holm_adjusted(paired["p_value"].tolist()))
    assert list(paired["holm_reject"]) == list(paired["p_holm"] < 0.05)
    shown = report.paired_with_holm(paired)
    assert {"p (Holm)", "holds after Holm"} <= set(shown.columns) and "p_holm" not in shown.columns
    older = report.paired_with_holm(paired.drop(columns=["p_holm", "holm_reject"]))  # a run from before the columns
    pd.testing.assert_frame_equal(older, shown)


def test_a_latency_target_says_how_many_passes_its_median_is_of():
    timed = pd.Series({"latency_passes": 3, "latency_p50_min_ms": 12.76, "latency_p50_max_ms": 14.25})
    latency = next(t for t in targets.TARGETS if t.unit == "ms")
    assert targets._note(latency, 13.9, math.nan, math.nan, timed) == "median of 3 passes (their p50s 12.8–14.2 ms), no CI"
    assert targets._note(latency, 13.9, math.nan, math.nan, pd.Series({"latency_passes": 1})) == "one measurement, no CI"
    verdicts = targets.verdicts(REFERENCE, DEFAULT_ARM).set_index("target")
    assert verdicts.loc["hybrid route p50, 54 tools, one query at a time", "note"].startswith("median of 3 passes")


def test_card_improvement_findings_count_hit1_over_the_call_rows():
    run = report.load_run(REFERENCE)
    text = " ".join(card_findings.card_improvement(run))
    aug = run.table("06_card_improvement", "augmentation")
    for _, row in aug[aug["hit@1_diff"].notna()].iterrows():
        assert f"over the {int(row['n_call'])} call rows" in text
    assert "n=267" not in text and "n=182" not in text


def test_tidy_keeps_each_progress_bar_once_and_no_machine_path(tmp_path):
    from toolroute_lab.run.pipeline import tidy_notebook

    root = "/home/someone/toolroute"
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stderr", text=f"{root}/.venv/lib/python3.11/site-packages/tqdm/auto.py:21: "
                                                            "TqdmWarning: IProgress not found. Please update jupyter\n"),
        nbformat.v4.new_output("stream", name="stderr", text="  from .autonotebook import tqdm as notebook_tqdm\n"),
        nbformat.v4.new_output("stream", name="stderr", text="\rruns:   0%|          | 0/3"),
        nbformat.v4.new_output("stream", name="stderr", text="\rruns:  33%|###       | 1/3"),
        nbformat.v4.new_output("stream", name="stderr", text="\rruns: 100%|##########| 3/3\r"),
        nbformat.v4.new_output("stream", name="stderr", text="\n"),
        nbformat.v4.new_output("stream", name="stdout", text=f"written to {root}/results/runs/x\n"),
        nbformat.v4.new_output("display_data", data={"text/plain": f"'{root}'"}),
        nbformat.v4.new_output("stream", name="stderr", text="\rother: 1/1\n"),
    ]
    nb.cells.append(cell)
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, str(path))
    removed = tidy_notebook(path, root=__import__("pathlib").Path(root))
    outputs = nbformat.read(str(path), as_version=4).cells[0].outputs
    assert removed == 5
    assert [o.get("name", o["output_type"]) for o in outputs] == ["stderr", "stdout", "display_data", "stderr"]
    assert outputs[0]["text"] == "runs: 100%|##########| 3/3\n"
    assert outputs[1]["text"] == "written to results/runs/x\n" and outputs[2]["data"]["text/plain"] == "'.'"
    assert outputs[3]["text"] == "other: 1/1\n"


def test_the_reference_notebooks_keep_no_machine_path_and_few_stderr_outputs():
    for path in sorted(REFERENCE.glob("*.ipynb")):
        text = path.read_text(encoding="utf-8")
        node = nbformat.reads(text, as_version=4)
        stderr = [o for c in node.cells if c.cell_type == "code" for o in c.outputs
                  if o.get("output_type") == "stream" and o.get("name") == "stderr"]
        assert str(ROOT) not in text, path.name
        assert len(stderr) <= sum(c.cell_type == "code" for c in node.cells), (path.name, len(stderr))
        assert not any("IProgress not found" in o["text"] for o in stderr), path.name


def test_every_reference_notebook_shows_its_figures_inline():
    """Issue 25: the figures are shown in the executed notebooks, not only saved: each notebook that declares
    figures holds at least that many PNG outputs (07 shows every section's)."""
    from test_declared import NOT_IN_REFERENCE_YET
    for experiment in declared.EXPERIMENTS:
        path = REFERENCE / f"{experiment.notebook}.ipynb"
        node = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
        images = sum("image/png" in o.get("data", {}) for c in node.cells if c.cell_type == "code" for o in c.outputs)
        pending = [f for f in experiment.figures if f"{experiment.notebook}/{f}" in NOT_IN_REFERENCE_YET]
        wanted = len(experiment.figures) - len(pending) if experiment.figures else 1
        assert images >= wanted, (experiment.notebook, images, wanted)


def test_the_ablation_section_draws_accuracy_against_route_time():
    run = report.load_run(REFERENCE)
    items = report.section(run, declared.TOOLCARD_ABLATION)
    pareto = [i for i in items if isinstance(i, pd.DataFrame) and "pareto" in i.columns]
    assert len(pareto) == 1 and pareto[0]["pareto"].any()
    timing = pd.read_csv(REFERENCE / "02_toolcard_ablation" / "timing_test.csv")
    assert set(pareto[0]["arm_label"]) == set(timing["arm_label"]) & set(run.table("02_toolcard_ablation", "ablation_by_split")["arm_label"])
    images = [i for i in items if not isinstance(i, (str, pd.DataFrame, Path))]
    assert len(images) == 1 and images[0].data[:8] == b"\x89PNG\r\n\x1a\n"
    positions = {id(item): n for n, item in enumerate(items)}
    assert positions[id(images[0])] < positions[id(pareto[0])]  # figures before tables


# --- agent arms (03 and 04 with `arms`) ---------------------------------------------------------------------------

def _arm_run(tmp_path, top_k: int = 5) -> report.RunOutputs:
    """A run whose 03 and 04 tables carry the routed top-1 and top-`top_k`, oracle, all-tools and ceiling arms
    (oracle and ceiling first, with top_k 0, as in an alphabetically ordered table)."""
    def cap_rows(arm, k, completed):
        return [{"model": "embedded", "arm": arm, "top_k": k, "cap": c, "runs": 10, "completed": n,
                 "completion": n / 10, "total_tokens": 1000.0 * c, "seconds": 5.0 * c, "llm_calls": c, "errors": 0}
                for c, n in zip([1, 3], completed)]
    routed = f"routed@{top_k}"
    by_cap = pd.DataFrame(cap_rows("gold_replay", 0, [9, 9]) + cap_rows("oracle", 0, [2, 7]) +
                          cap_rows("routed@1", 1, [0, 1]) + cap_rows(routed, top_k, [1, 4]))
    by_length = pd.DataFrame([{"model": "embedded", "arm": a, "top_k": k, "chain_length": 2, "cap": 3, "runs": 6,
                               "completed": n, "completion": n / 6}
                              for a, k, n in [("gold_replay", 0, 6), ("oracle", 0, 4), ("routed@1", 1, 0), (routed, top_k, 1)]])
    cuts = pd.DataFrame({"model": ["embedded"] * 3, "arm": ["oracle", "oracle", routed]})
    kinds = pd.DataFrame([{"model": "embedded", "arm": a, "kind": k, "turns": t, "tool_call_accuracy": acc,
                           "tool_name_f1": 0.5, "fact_presence": 0.3, "pass_rate": 0.25, "passed": 5, "n_pass_rate": 20}
                          for a, acc in [("routed@1", 0.1), (routed, 0.2)]
                          for k, t in [("scenario", 20), ("rag", 4), ("query", 8)]] +
                         [{"model": "embedded", "arm": a, "kind": "query", "turns": 8, "tool_name_f1": f}
                          for a, f in [("oracle", 0.875), ("all_tools", 0.0)]])
    by_arm = pd.DataFrame([{"model": "embedded", "arm": a, "kind": "query", "runs": r, "over_context": o,
                            "completed": n, "tools_ok_count": t, "tool_name_f1": f, "prompt_tokens": p}
                           for a, r, o, n, t, f, p in [("all_tools", 8, 8, 0, 1, 0.0, float("nan")),
                                                       ("gold_replay", 3, 0, 3, 3, 1.0, 500.0),
                                                       ("oracle", 8, 0, 7, 7, 0.875, 800.0),
                                                       ("routed@1", 8, 0, 2, 2, 0.25, 900.0),
                                                       (routed, 8, 0, 4, 4, 0.5, 2100.0)]])
    manifest = {"notebooks": {"03_step_limits": {"parameters": {"top_ks": [top_k, 9]}},
                              "04_ragas_eval": {"parameters": {"top_k": top_k}}}}
    return report.RunOutputs(tmp_path, manifest=manifest, tables={
        "03_step_limits": {"by_cap": by_cap, "by_length": by_length, "cut_chains": cuts},
        "04_ragas_eval": {"by_kind": kinds, "by_arm": by_arm}})


@pytest.mark.parametrize("top_k", [5, 3])
def test_step_limit_findings_describe_the_agent_then_the_oracle_and_the_ceiling(tmp_path, top_k):
    text = step_findings.step_limits(_arm_run(tmp_path, top_k), proposed_cap=3)
    assert 3 <= len(text) <= 6, text
    assert text[0].startswith(f"At cap 3 the agent with the router's top {top_k} (model embedded) completed 4/10")
    assert "from 10% (cap 1) to 40% (cap 3)" in text[1]
    others = next(s for s in text if s.startswith("Completed with"))
    assert others.index("top 1: cap 1 0/10, cap 3 1/10") < others.index("oracle router: cap 1 2/10, cap 3 7/10") \
        < others.index("written by the model: 9/10 (90%, 95% CI 60%–98%) at every cap (the cap does not apply)")
    lengths = next(s for s in text if s.startswith("By the number of tools"))
    assert lengths.index(f"top {top_k}: 2 tools 1/6") < lengths.index("top 1: 2 tools 0/6") \
        < lengths.index("oracle router: 2 tools 4/6")
    assert text[-1] == (f"3 runs failed at a cap although a higher cap completed the same task: 1 with the router's "
                        f"top {top_k}, 2 with the gold tools bound by an oracle router.")


def test_step_limit_findings_say_how_the_chains_ended_per_arm(tmp_path):
    """Issue 24: why the multi-tool tasks failed at the proposed cap, per arm, from 03's runs.csv."""
    run = _arm_run(tmp_path)
    runs = pd.DataFrame([{"model": "embedded", "arm": arm, "top_k": 5, "cap": 3, "chain_length": 2,
                          "gold_tools": '["a", "b"]', "called_tools": called, "completed": done, "capped": False,
                          "error": "", "blocked": ""}
                         for arm, called, done in [("routed@5", '["a"]', False), ("routed@5", "[]", False),
                                                   ("oracle", '["a", "b"]', False), ("oracle", '["a", "b"]', True),
                                                   ("gold_replay", '["a", "b"]', True)]])
    (tmp_path / "03_step_limits").mkdir()
    runs.to_csv(tmp_path / "03_step_limits" / "runs.csv", index=False)
    text = step_findings.step_limits(run, proposed_cap=3)
    assert 3 <= len(text) <= 6, text
    why = next(s for s in text if s.startswith("How the two- and three-tool tasks ended at cap 3"))
    assert why.endswith("the router's top 5 0 of 2 completed (1 stopped early, 1 no tool called); the gold tools bound "
                        "by an oracle router 1 of 2 completed (1 facts missing); the gold calls replayed and only the "
                        "answer written by the model 1 of 1 completed.")


def test_step_limit_findings_without_a_routed_arm_name_the_arm_they_describe(tmp_path):
    run = _arm_run(tmp_path)
    by_cap = run.tables["03_step_limits"]["by_cap"]
    run.tables["03_step_limits"] = {"by_cap": by_cap[by_cap.arm.isin(["oracle", "gold_replay"])]}
    text = step_findings.step_limits(run, proposed_cap=3)
    assert text[0].startswith("At cap 3 the agent with the gold tools bound by an oracle router (model embedded) "
                              "completed 7/10") and "Across caps 1, 3," in text[1]


def test_several_models_share_one_sentence(tmp_path):
    run = _arm_run(tmp_path)
    by_cap = run.tables["03_step_limits"]["by_cap"]
    run.tables["03_step_limits"]["by_cap"] = pd.concat([by_cap.assign(model=m) for m in "abc"], ignore_index=True)
    text = step_findings.step_limits(run, proposed_cap=3)
    assert 3 <= len(text) <= 6 and text[0].count("4/10") == 3 and "model a: 4/10" in text[0]


def test_ragas_findings_read_the_agents_arm_and_compare_the_arms_on_the_test_queries(tmp_path):
    text = ragas_findings.ragas(_arm_run(tmp_path))
    assert 3 <= len(text) <= 6, text
    assert "On the 20 scenario turns" in text[0] and "is 0.200" in text[0] and "5/20 (25%" in text[0]  # top 5, not 1
    assert any(s.startswith("On 8 test queries the end-to-end tool-name F1 is 0.500 with the router's top 5") for s in text)
    arms = next(s for s in text if s.startswith("Test queries completed"))
    assert arms.index("the router's top 1 2/8") < arms.index("top 5 4/8") < arms.index("oracle router 7/8")
    assert "every tool bound: none sent, all 8 prompts over the model's context" in arms
    assert "replayed" not in arms  # the ceiling is complete by construction on test queries


def test_the_model_table_reads_the_agents_arm(tmp_path):
    table = report.model_comparison(_arm_run(tmp_path), proposed_cap=3).set_index("model")
    assert table.loc["embedded", "03 completed"] == "4/10"
    assert table.loc["embedded", "04 scenario tool_call_accuracy"] == 0.2
    assert table.loc["embedded", "04 turns (every arm)"] == 80


def test_the_arms_table_puts_each_value_beside_its_ci_and_leaves_out_the_mixed_pool():
    by_arm = pd.DataFrame({"model": ["m"] * 4, "arm": ["oracle", "routed@5", "routed@5", "all_tools"],
                           "kind": ["query", "all", "query", "query"], "runs": [8, 30, 8, 8], "over_context": [0, 0, 0, 8],
                           "completion": [0.875, 0.5, 0.25, 0.0], "completion_lo": [0.53, 0.3, 0.07, 0.0],
                           "completion_hi": [0.98, 0.7, 0.59, 0.32], "prompt_tokens": [800.0, 2100.4, 2000.0, float("nan")]})
    [view] = report.arm_view(by_arm)
    assert list(view["arm"]) == ["routed@5", "oracle", "all_tools"] and "model" not in view.columns
    assert list(view["completion [95% CI]"]) == ["0.250 [0.070, 0.590]", "0.875 [0.530, 0.980]", "–"]  # none sent
    assert list(view["prompt_tokens [95% CI]"]) == ["2,000", "800", "–"]
    assert view.attrs["caption"].startswith("The agent arms: rates with Wilson 95% intervals")
    assert report.arm_view(None) == []


def test_the_best_consultation_is_the_one_with_most_turns_passed_not_the_first_of_a_tie():
    from toolroute_lab.e04_ragas_eval.findings import best_consultation

    table = pd.DataFrame({"conversation": ["S1", "S2", "S9"], "tool_call_accuracy": [0.25, 0.0, 0.25],
                          "fact_presence": [0.12, 0.9, 0.75], "pass_rate": [0.0, 0.25, 0.5]})
    assert best_consultation(table)["conversation"] == "S9"
    assert best_consultation(table.drop(columns=["pass_rate"]))["conversation"] == "S9"  # then facts break the tie
