"""The judged subset of notebook 04 (a sample per metric, faithfulness on every turn with passages) and
the judge checked against our hand labels (`toolroute_lab/e04_ragas_eval/judge_check.py`)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from toolroute_lab.e04_ragas_eval import judge_check
from toolroute_lab.e04_ragas_eval import ragas_eval
from toolroute_lab.e04_ragas_eval.ragas_eval import EvalItem


def _runs_and_items(n_scenario: int = 30, n_rag: int = 25, n_query: int = 30):
    rows, items = [], []
    for kind, n in (("scenario", n_scenario), ("rag", n_rag), ("query", n_query)):
        for i in range(n):
            rid = f"{kind}-{i}"
            passages = ["근거 문단"] if kind == "rag" and i % 5 else []  # 4 of 5 RAG turns retrieved passages
            rows.append({"kind": kind, "id": rid, "user": "질문", "answer": "" if i == 3 else "답변",
                         "retrieved_contexts": passages, "tool_log": []})
            items.append(EvalItem(kind=kind, id=rid, conversation=rid, user="질문"))
    return pd.DataFrame(rows), items


def test_every_metric_gets_its_own_sample_and_faithfulness_every_turn_with_passages():
    runs, items = _runs_and_items()
    subset = ragas_eval.judge_subset(runs, items, per_metric=20)
    per_metric = {m: subset[subset.judge_metrics.map(lambda ms, m=m: m in ms)] for m in ragas_eval.LLM_METRICS}
    with_passages = runs[(runs.retrieved_contexts.map(len) > 0) & (runs.answer != "")]
    assert set(per_metric["faithfulness"].id) == set(with_passages.id)  # every one, not a sample
    assert len(per_metric["answer_relevancy"]) == 20
    assert set(per_metric["answer_relevancy"].kind) == {"scenario", "rag", "query"}  # spread over the kinds
    assert len(per_metric["agent_goal_accuracy"]) == 20 and set(per_metric["agent_goal_accuracy"].kind) == {"scenario"}
    assert "" not in set(per_metric["answer_relevancy"].answer)  # an empty answer is not judged for relevance
    everything = ragas_eval.judge_subset(runs, items, per_metric=None)
    assert everything.judge_metrics.map(lambda ms: "answer_relevancy" in ms).sum() == (runs.answer != "").sum()


def test_a_row_outside_a_metrics_sample_is_marked_not_sampled_and_not_judged():
    from ragas.llms.base import InstructorBaseRagasLLM

    asked = []

    class CountingJudge(InstructorBaseRagasLLM):
        def __init__(self):
            pass

        def generate(self, prompt, response_model):
            raise AssertionError("the synchronous path is not used")

        async def agenerate(self, prompt, response_model):
            asked.append(prompt)
            raise ValueError("no verdict")

    runs, items = _runs_and_items(n_scenario=2, n_rag=0, n_query=0)
    runs["judge_metrics"] = [["agent_goal_accuracy"], []]
    judged = ragas_eval.score_with_llm(runs, items, CountingJudge(), metrics=["agent_goal_accuracy"], progress=False)
    assert list(judged.agent_goal_accuracy_status.str[:6]) == ["failed", "not sa"]
    assert len(asked) == 1
    table = ragas_eval.judge_failures(judged).set_index("metric")
    assert table.loc["agent_goal_accuracy", ["attempted", "failed", "not_sampled"]].tolist() == [1, 1, 1]


def test_agreement_on_known_scores():
    scored = pd.DataFrame([
        {"id": "a", "metric": "faithfulness", "human": 1, "judge": 0.9, "status": "ok"},
        {"id": "b", "metric": "faithfulness", "human": 1, "judge": 0.4, "status": "ok"},
        {"id": "c", "metric": "faithfulness", "human": 0, "judge": 0.2, "status": "ok"},
        {"id": "d", "metric": "faithfulness", "human": 0, "judge": 0.6, "status": "ok"},
        {"id": "e", "metric": "faithfulness", "human": 0, "judge": float("nan"), "status": "failed: x"},
        {"id": "f", "metric": "answer_relevancy", "human": 1, "judge": 0.8, "status": "ok"},
        {"id": "g", "metric": "answer_relevancy", "human": 0, "judge": 0.1, "status": "ok"},
    ])
    table = judge_check.agreement(scored).set_index("metric")
    faith = table.loc["faithfulness"]
    assert (faith.rows, faith.judged, faith.failed, faith.human_ones) == (5, 4, 1, 2)
    assert faith.auc == pytest.approx(0.75)  # 3 of the 4 (one, zero) pairs ordered right
    assert faith.agreement == pytest.approx(0.5) and faith.kappa == pytest.approx(0.0)
    assert table.loc["answer_relevancy", "auc"] == 1.0 and table.loc["answer_relevancy", "kappa"] == 1.0


def test_the_committed_labels_cover_each_metric_with_both_verdicts_and_reasons():
    labels = judge_check.load_labels()
    assert len(labels) >= 30
    frame = pd.DataFrame(labels)
    for metric in ragas_eval.LLM_METRICS:
        part = frame[frame.metric == metric]
        assert len(part) >= 10, metric
        assert set(part.human) == {0, 1}, f"{metric}: our labels must hold both verdicts to test the judge"
    assert frame.rationale.str.len().min() >= 15  # a reason, not a word
    runs, items = judge_check.as_runs(labels)
    assert runs.judge_metrics.map(len).eq(1).all() and len(items) == len(labels)


def test_bad_label_rows_are_refused_naming_the_line_and_field(tmp_path):
    good = {"id": "x1", "metric": "answer_relevancy", "user": "질문", "answer": "답", "human": 1,
            "rationale": "묻는 내용에 바로 답한다", "source": "test"}
    for broken, field in [({**good, "human": 0.5}, "human"), ({**good, "metric": "faithfullness"}, "metric"),
                          ({**good, "metric": "faithfulness"}, "retrieved_contexts"),
                          ({**good, "rationale": ""}, "rationale")]:
        path = tmp_path / "labels.jsonl"
        path.write_text(json.dumps(good, ensure_ascii=False) + "\n" + json.dumps(broken, ensure_ascii=False) + "\n",
                        encoding="utf-8")
        with pytest.raises(ValueError, match=rf"labels.jsonl:2: .*{field}"):
            judge_check.load_labels(path)
