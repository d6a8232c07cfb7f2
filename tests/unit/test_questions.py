"""The mission's questions answered from a run's tables (issue 39): each sentence carries the effect, its CI,
n and the test, follows the numbers it is read from, and says "not measured" when its part did not run."""

import re

import pandas as pd
import pytest

from toolroute.config import ROOT
from toolroute.routing import RouterConfig
from toolroute_lab.e07_report import questions, report


@pytest.fixture(scope="module")
def reference():
    return report.load_run(ROOT / "results/reference")


def test_every_question_is_answered_from_the_reference_or_said_to_be_unmeasured(reference):
    answers = questions.mission_answers(reference, RouterConfig().label)
    assert len(answers) == 5 and all(a.question.endswith("?") for a in answers)
    for answer in answers:
        if answer.sentence.startswith("Not measured"):
            continue
        assert re.search(r"\[[-+]?\d\.\d{2,3}, [-+]?\d\.\d{2,3}\]", answer.sentence), answer.sentence  # a CI
        assert "n = " in answer.sentence or "/" in answer.sentence, answer.sentence
        assert answer.test and answer.evidence is not None and len(answer.evidence)


def test_the_single_vs_multi_answer_reads_the_default_cell():
    table = pd.DataFrame([
        {"retriever": "hybrid", "aggregation": "top2", "metric": "right_call", "split": "test", "n": 100, "diff": 0.05,
         "diff_lo": 0.01, "diff_hi": 0.09, "p_holm": 0.01, "holm_reject": True, "single_value": 0.8, "multi_value": 0.85},
        {"retriever": "dense", "aggregation": "max", "metric": "right_call", "split": "test", "n": 100, "diff": -0.1,
         "diff_lo": -0.15, "diff_hi": -0.05, "p_holm": 0.001, "holm_reject": True, "single_value": 0.8, "multi_value": 0.7},
    ])
    answer = questions.single_vs_multi({"representation": table})
    assert answer.sentence.startswith("**Yes.**")
    assert "+0.050 [+0.010, +0.090], n = 100" in answer.sentence and "wins 1 and loses 1" in answer.sentence
    table.loc[0, ["diff", "diff_lo", "diff_hi"]] = [0.01, -0.02, 0.04]
    assert questions.single_vs_multi({"representation": table}).sentence.startswith("**No.**")
    assert questions.single_vs_multi({}).sentence.startswith("Not measured")


def test_the_choice_answer_reads_the_look_alike_bind_on_the_confusion_rows():
    table = pd.DataFrame([
        {"bind": "routed@5", "subset": "all call rows", "n": 84, "with_wnu": 0.6, "without_wnu": 0.5, "diff": 0.1,
         "with_only": 10, "without_only": 2, "p_mcnemar": 0.04, "power_10_points": 0.5, "p_holm": 0.08},
        {"bind": "oracle_confusers", "subset": "confusion-pair rows", "n": 84, "with_wnu": 0.75, "without_wnu": 0.55,
         "diff": 0.2, "with_only": 20, "without_only": 3, "p_mcnemar": 0.0005, "power_10_points": 0.6, "p_holm": 0.001},
    ])
    answer = questions.wnu_in_choice({"wnu_choice": table})
    assert answer.sentence.startswith("**Yes.**") and "oracle_confusers" in answer.sentence
    assert "0.750 [" in answer.sentence and "n = 84" in answer.sentence and "20 rows right only with" in answer.sentence
    assert questions.wnu_in_choice({}).sentence.startswith("Not measured")


def test_a_judge_that_cannot_reach_the_trusted_agreement_is_said_not_to_be_evidence():
    agreement = pd.DataFrame([
        {"model": "m", "metric": "faithfulness", "rows": 11, "judged": 11, "agreement": 2 / 11, "kappa": -0.6, "auc": 0.2},
        {"model": "m", "metric": "answer_relevancy", "rows": 10, "judged": 10, "agreement": 0.9, "kappa": 0.8, "auc": 0.9},
    ])
    by_kind = pd.DataFrame([{"faithfulness": 0.5, "n_faithfulness": 4, "answer_relevancy": 0.6, "n_answer_relevancy": 10}])
    answer = questions.ragas_judge({"judge_agreement": agreement, "by_kind": by_kind})
    assert "faithfulness agrees below 70%" in answer.sentence and "answer_relevancy agree" not in answer.sentence
    row = answer.evidence.set_index("metric").loc["faithfulness"]
    assert row["agreement_hi"] < 0.7 and row["rows scored"] == 4 and row["mean score"] == pytest.approx(0.5)


def test_the_step_limit_answer_pairs_the_same_tasks():
    rows = []
    for task, (at1, at3) in enumerate([(True, True), (False, True), (False, True), (False, False)]):
        for cap, done in ((1, at1), (3, at3)):
            rows.append({"model": "m", "arm": "routed@5", "domain": "d", "task_id": f"t{task}", "cap": cap,
                         "completed": done, "total_tokens": 100 * cap, "seconds": 1.0})
    answer = questions.step_limits(pd.DataFrame(rows), proposed=3)
    assert "3/4 tasks = 0.750" in answer.sentence and "against 1/4 at cap 1" in answer.sentence
    assert "2 complete only at cap 3, 0 only at cap 1" in answer.sentence and "+200 tokens" in answer.sentence


def test_a_run_without_arms_or_with_an_older_table_is_answered_or_said_unread(tmp_path):
    runs = pd.DataFrame([{"model": "m", "domain": "d", "task_id": "t", "cap": cap, "completed": True,
                          "total_tokens": 10, "seconds": 1.0} for cap in (1, 3)])
    assert "1/1 tasks" in questions.step_limits(runs, 3).sentence  # no arm column: every run is the agent's
    run = report.RunOutputs(tmp_path, tables={"02_toolcard_ablation": {"representation": pd.DataFrame({"metric": ["hit@1"]})}})
    answers = questions.mission_answers(run, RouterConfig().label)
    assert answers[0].sentence.startswith("Not read from this run: its table has no column")
    assert [a.question for a in answers][:3] == list(questions.QUESTIONS[:3])


def test_every_p_column_of_a_shown_table_reads_as_a_p_value():
    shown = report.format_table(pd.DataFrame({"p_mcnemar": [0.0001], "p_holm": [0.0004], "p_value": [0.2],
                                              "prompt_tokens": [0.0001]}))
    assert shown.loc[0, "p_mcnemar"] == shown.loc[0, "p_holm"] == "< 0.001"
    assert shown.loc[0, "prompt_tokens"] != "< 0.001"
