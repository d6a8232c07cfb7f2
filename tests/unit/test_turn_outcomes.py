"""Why a consultation turn of 04 failed (`toolroute_lab.e04_ragas_eval.turn_outcomes`), and the report's sentence."""

from __future__ import annotations

import pandas as pd

from toolroute_lab.e04_ragas_eval.turn_outcomes import OUTCOMES, failed_calls, outcome, outcome_counts


def _turn(**fields):
    base = {"kind": "scenario", "id": "S1-t1", "gold_tools": '["a", "b"]', "routed": '["a", "b", "c"]',
            "called_tools": '["a", "b"]', "blocked": float("nan"), "error": float("nan"), "failed_calls": 0,
            "passed": 0.0}
    return {**base, **fields}


def test_a_failed_call_is_an_error_or_a_status_other_than_ok():
    log = [{"status": "success", "result": {"status": "ok"}}, {"status": "success", "result": {"status": "not_found"}},
           {"status": "error", "result": {"error": "boom"}}, {"status": "success", "result": "text"},
           {"status": "success", "result": {"status": "rejected"}}]
    assert failed_calls(log) == 3 and failed_calls([]) == 0 and failed_calls(None) == 0


def test_each_turn_gets_the_first_lever_that_lost_it():
    assert outcome(_turn(passed=1.0)) == "passed"
    assert outcome(_turn(error="LLM down")) == "error"
    assert outcome(_turn(blocked="injection:banned_claim_order")) == "blocked"
    assert outcome(_turn(routed='["a", "c"]')) == "not routed"
    assert outcome(_turn(called_tools='["a"]')) == "not all called"
    assert outcome(_turn(failed_calls=1)) == "call did not answer"
    assert outcome(_turn()) == "answer"
    assert outcome({k: v for k, v in _turn(failed_calls=1).items() if k != "failed_calls"}) == "answer"  # older runs


def test_counts_match_passed_by_model_arm_and_id_and_keep_the_outcome_order():
    runs = pd.DataFrame([_turn(id="t1"), _turn(id="t2", routed='["c"]'), _turn(id="t3", failed_calls=2),
                         {**_turn(id="q1"), "kind": "query"}]).assign(model="m", arm="routed@5")
    other_arm = pd.DataFrame({"model": ["m"], "arm": ["oracle"], "id": ["t1"], "passed": [0.0]})
    scores = pd.concat([runs[["model", "arm", "id"]].assign(passed=[1.0, 0.0, 0.0, float("nan")]), other_arm])
    counts = outcome_counts(runs.drop(columns="passed"), scores)
    assert counts.to_dict() == {"passed": 1, "call did not answer": 1, "not routed": 1}
    assert list(counts.index) == [o for o in OUTCOMES if o in counts.index]


def test_the_report_sentence_counts_the_failed_turns_per_lever(tmp_path):
    from toolroute_lab.e04_ragas_eval.findings import _turn_outcomes_clause

    folder = tmp_path / "04_ragas_eval"
    folder.mkdir()
    runs = pd.DataFrame([_turn(id="t1"), _turn(id="t2", routed='["c"]'), _turn(id="t3", failed_calls=2),
                         _turn(id="t4", called_tools='["a"]')]).assign(model="m", arm="routed@5")
    runs.drop(columns="passed").to_csv(folder / "runs.csv", index=False)
    scores = runs[["model", "arm", "kind", "id"]].assign(passed=[0.0, 0.0, 0.0, 1.0])

    class Run:
        run_dir = tmp_path

        @staticmethod
        def table(notebook, name):
            return scores if name == "scores" else None

    clause = _turn_outcomes_clause(Run, 5)
    assert clause == ("; the 3 failing turns by the lever that lost them: a gold tool not routed (outside the top k) 1, "
                      "a call without an answer (all called) 1, a fact or check missed (every call answered) 1")
